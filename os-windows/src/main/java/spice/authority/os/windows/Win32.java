package spice.authority.os.windows;

/**
 * Constants of the Windows calls this module makes (winnt.h, winbase.h, fileapi.h, ntifs.h,
 * ntstatus.h, winerror.h), kept apart from the JNA doors so that pure-Java code and tests can use
 * them without loading any native library. Values are verbatim from the SDK headers.
 */
final class Win32 {

    private Win32() {}

    // ---- NtCreateFile: OBJECT_ATTRIBUTES.Attributes ----
    static final int OBJ_CASE_INSENSITIVE = 0x00000040;
    /** Fail with STATUS_REPARSE_POINT_ENCOUNTERED instead of following any reparse point. */
    static final int OBJ_DONT_REPARSE = 0x00001000;

    // ---- NtCreateFile: CreateDisposition ----
    static final int FILE_OPEN = 1;
    static final int FILE_CREATE = 2;

    // ---- NtCreateFile: CreateOptions ----
    static final int FILE_DIRECTORY_FILE = 0x00000001;
    static final int FILE_SYNCHRONOUS_IO_NONALERT = 0x00000020;
    static final int FILE_NON_DIRECTORY_FILE = 0x00000040;
    static final int FILE_OPEN_REPARSE_POINT = 0x00200000;

    // ---- IO_STATUS_BLOCK.Information after a create ----
    static final int FILE_OPENED = 1;
    static final int FILE_CREATED = 2;

    // ---- share modes ----
    static final int FILE_SHARE_READ = 0x1;
    static final int FILE_SHARE_WRITE = 0x2;
    static final int FILE_SHARE_DELETE = 0x4;

    // ---- file attributes ----
    static final int FILE_ATTRIBUTE_DIRECTORY = 0x10;
    static final int FILE_ATTRIBUTE_NORMAL = 0x80;
    static final int FILE_ATTRIBUTE_REPARSE_POINT = 0x400;

    // ---- CreateFileW ----
    static final int OPEN_EXISTING = 3;
    static final int FILE_FLAG_BACKUP_SEMANTICS = 0x02000000;
    static final int FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000;

    // ---- FILE_INFO_BY_HANDLE_CLASS ----
    static final int FileStandardInfo = 1;
    static final int FileRenameInfo = 3;
    static final int FileDispositionInfo = 4;
    static final int FileAttributeTagInfo = 9;
    static final int FileFullDirectoryInfo = 14;
    static final int FileFullDirectoryRestartInfo = 15;
    static final int FileIdInfo = 18;
    static final int FileDispositionInfoEx = 21;
    static final int FileRenameInfoEx = 22;

    static final int FILE_RENAME_FLAG_REPLACE_IF_EXISTS = 0x1;
    static final int FILE_RENAME_FLAG_POSIX_SEMANTICS = 0x2;
    static final int FILE_DISPOSITION_FLAG_DELETE = 0x1;
    static final int FILE_DISPOSITION_FLAG_POSIX_SEMANTICS = 0x2;

    // ---- LockFileEx ----
    static final int LOCKFILE_FAIL_IMMEDIATELY = 0x1;
    static final int LOCKFILE_EXCLUSIVE_LOCK = 0x2;

    // ---- GetSecurityInfo ----
    static final int SE_FILE_OBJECT = 1;
    static final int OWNER_SECURITY_INFORMATION = 0x1;
    static final int DACL_SECURITY_INFORMATION = 0x4;

    // ---- tokens and processes ----
    static final int TOKEN_QUERY = 0x0008;
    static final int TokenUser = 1;
    static final int PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
    static final int ProcessBasicInformation = 0;
    static final int WAIT_OBJECT_0 = 0;
    static final int WAIT_TIMEOUT = 0x102;
    static final int WAIT_FAILED = 0xFFFFFFFF;
    static final int INFINITE = 0xFFFFFFFF;

    // ---- GetExtendedTcpTable ----
    static final int AF_INET = 2;
    static final int AF_INET6 = 23;
    /** Rows with the owning pid and the connection's creation time ({@code liCreateTimestamp}). */
    static final int TCP_TABLE_OWNER_MODULE_CONNECTIONS = 7;

    // ---- GetDriveTypeW ----
    static final int DRIVE_REMOVABLE = 2;
    static final int DRIVE_FIXED = 3;
    static final int DRIVE_RAMDISK = 6;

    // ---- GetFinalPathNameByHandleW ----
    static final int FILE_NAME_NORMALIZED = 0x0;
    static final int VOLUME_NAME_DOS = 0x0;

    // ---- Win32 errors ----
    static final int ERROR_FILE_NOT_FOUND = 2;
    static final int ERROR_PATH_NOT_FOUND = 3;
    static final int ERROR_ACCESS_DENIED = 5;
    static final int ERROR_NO_MORE_FILES = 18;
    static final int ERROR_SHARING_VIOLATION = 32;
    static final int ERROR_LOCK_VIOLATION = 33;
    static final int ERROR_NOT_SUPPORTED = 50;
    static final int ERROR_INVALID_PARAMETER = 87;
    static final int ERROR_INSUFFICIENT_BUFFER = 122;
    static final int ERROR_ALREADY_EXISTS = 183;
    static final int ERROR_IO_PENDING = 997;
    static final int ERROR_INVALID_FUNCTION = 1;

    // ---- NTSTATUS ----
    static final int STATUS_SUCCESS = 0;
    static final int STATUS_ACCESS_DENIED = 0xC0000022;
    static final int STATUS_OBJECT_NAME_INVALID = 0xC0000033;
    static final int STATUS_OBJECT_NAME_NOT_FOUND = 0xC0000034;
    static final int STATUS_OBJECT_NAME_COLLISION = 0xC0000035;
    static final int STATUS_OBJECT_PATH_NOT_FOUND = 0xC000003A;
    static final int STATUS_SHARING_VIOLATION = 0xC0000043;
    static final int STATUS_DELETE_PENDING = 0xC0000056;
    static final int STATUS_FILE_IS_A_DIRECTORY = 0xC00000BA;
    static final int STATUS_NOT_A_DIRECTORY = 0xC0000103;
    static final int STATUS_REPARSE_POINT_ENCOUNTERED = 0xC000050B;
    static final int STATUS_STOPPED_ON_SYMLINK = 0x8000002D;

    /** Whether an NTSTATUS is an error (severity bits 11) or a warning (10): anything not success or informational. */
    static boolean ntFailed(int status) {
        return status < 0 || (status >>> 30) == 2;
    }
}
