package spice.authority.os.windows;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.WString;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.win32.StdCallLibrary;

/**
 * The door to {@code kernel32.dll}: raw JNA bindings, names verbatim, each method's Javadoc the C
 * prototype. Only {@link JnaWindowsCalls} calls it. Error codes are read with
 * {@code Native.getLastError()} right after the failing call on the same thread (JNA keeps the
 * value per thread, captured per call); methods do not declare {@code LastErrorException}, which
 * would throw on calls that succeed with a last error set.
 *
 * <p>The nested structures are laid out by JNA with MSVC alignment; {@code StructureLayoutTest}
 * checks their sizes and offsets against the documented 64-bit values. The interface holds no
 * instance: JNA reads the static fields of a structure's enclosing library, so an instance field
 * here would load {@code kernel32} whenever a structure is built. {@link JnaWindowsCalls} loads
 * the library (on Windows only).
 *
 * <p>NOT RUN: no method of this door has been called on Windows yet (see README.md).
 */
interface Kernel32 extends StdCallLibrary {

    /** {@code BOOL CloseHandle(HANDLE hObject);} */
    boolean CloseHandle(Pointer hObject);

    /**
     * {@code HANDLE CreateFileW(LPCWSTR lpFileName, DWORD dwDesiredAccess, DWORD dwShareMode,
     * LPSECURITY_ATTRIBUTES lpSecurityAttributes, DWORD dwCreationDisposition, DWORD
     * dwFlagsAndAttributes, HANDLE hTemplateFile);}
     */
    Pointer CreateFileW(WString lpFileName, int dwDesiredAccess, int dwShareMode, Pointer lpSecurityAttributes,
                        int dwCreationDisposition, int dwFlagsAndAttributes, Pointer hTemplateFile);

    /** {@code UINT GetDriveTypeW(LPCWSTR lpRootPathName);} */
    int GetDriveTypeW(WString lpRootPathName);

    /**
     * {@code BOOL GetFileInformationByHandleEx(HANDLE hFile, FILE_INFO_BY_HANDLE_CLASS
     * FileInformationClass, LPVOID lpFileInformation, DWORD dwBufferSize);}
     */
    boolean GetFileInformationByHandleEx(Pointer hFile, int FileInformationClass, Pointer lpFileInformation,
                                         int dwBufferSize);

    /**
     * {@code BOOL SetFileInformationByHandle(HANDLE hFile, FILE_INFO_BY_HANDLE_CLASS
     * FileInformationClass, LPVOID lpFileInformation, DWORD dwBufferSize);}
     */
    boolean SetFileInformationByHandle(Pointer hFile, int FileInformationClass, Pointer lpFileInformation,
                                       int dwBufferSize);

    /**
     * {@code DWORD GetFinalPathNameByHandleW(HANDLE hFile, LPWSTR lpszFilePath, DWORD cchFilePath,
     * DWORD dwFlags);}
     */
    int GetFinalPathNameByHandleW(Pointer hFile, Pointer lpszFilePath, int cchFilePath, int dwFlags);

    /** {@code BOOL FlushFileBuffers(HANDLE hFile);} */
    boolean FlushFileBuffers(Pointer hFile);

    /**
     * {@code BOOL ReadFile(HANDLE hFile, LPVOID lpBuffer, DWORD nNumberOfBytesToRead, LPDWORD
     * lpNumberOfBytesRead, LPOVERLAPPED lpOverlapped);}
     */
    boolean ReadFile(Pointer hFile, Pointer lpBuffer, int nNumberOfBytesToRead, IntByReference lpNumberOfBytesRead,
                     Pointer lpOverlapped);

    /**
     * {@code BOOL WriteFile(HANDLE hFile, LPCVOID lpBuffer, DWORD nNumberOfBytesToWrite, LPDWORD
     * lpNumberOfBytesWritten, LPOVERLAPPED lpOverlapped);}
     */
    boolean WriteFile(Pointer hFile, Pointer lpBuffer, int nNumberOfBytesToWrite,
                      IntByReference lpNumberOfBytesWritten, Pointer lpOverlapped);

    /**
     * {@code BOOL LockFileEx(HANDLE hFile, DWORD dwFlags, DWORD dwReserved, DWORD
     * nNumberOfBytesToLockLow, DWORD nNumberOfBytesToLockHigh, LPOVERLAPPED lpOverlapped);}
     */
    boolean LockFileEx(Pointer hFile, int dwFlags, int dwReserved, int nNumberOfBytesToLockLow,
                       int nNumberOfBytesToLockHigh, OVERLAPPED lpOverlapped);

    /**
     * {@code BOOL UnlockFileEx(HANDLE hFile, DWORD dwReserved, DWORD nNumberOfBytesToUnlockLow,
     * DWORD nNumberOfBytesToUnlockHigh, LPOVERLAPPED lpOverlapped);}
     */
    boolean UnlockFileEx(Pointer hFile, int dwReserved, int nNumberOfBytesToUnlockLow, int nNumberOfBytesToUnlockHigh,
                         OVERLAPPED lpOverlapped);

    /** {@code HANDLE OpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwProcessId);} */
    Pointer OpenProcess(int dwDesiredAccess, boolean bInheritHandle, int dwProcessId);

    /**
     * {@code BOOL GetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime, LPFILETIME
     * lpExitTime, LPFILETIME lpKernelTime, LPFILETIME lpUserTime);}
     */
    boolean GetProcessTimes(Pointer hProcess, FILETIME lpCreationTime, FILETIME lpExitTime, FILETIME lpKernelTime,
                            FILETIME lpUserTime);

    /** {@code HANDLE GetCurrentProcess(void);} */
    Pointer GetCurrentProcess();

    /**
     * {@code HANDLE CreateEventW(LPSECURITY_ATTRIBUTES lpEventAttributes, BOOL bManualReset, BOOL
     * bInitialState, LPCWSTR lpName);}
     */
    Pointer CreateEventW(Pointer lpEventAttributes, boolean bManualReset, boolean bInitialState, WString lpName);

    /** {@code BOOL SetEvent(HANDLE hEvent);} */
    boolean SetEvent(Pointer hEvent);

    /**
     * {@code DWORD WaitForMultipleObjects(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll,
     * DWORD dwMilliseconds);}
     */
    int WaitForMultipleObjects(int nCount, Pointer[] lpHandles, boolean bWaitAll, int dwMilliseconds);

    /** {@code DWORD WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);} */
    int WaitForSingleObject(Pointer hHandle, int dwMilliseconds);

    /** {@code HLOCAL LocalFree(HLOCAL hMem);} */
    Pointer LocalFree(Pointer hMem);

    /** {@code typedef struct _FILE_ID_INFO { ULONGLONG VolumeSerialNumber; FILE_ID_128 FileId; } FILE_ID_INFO;} (24 bytes) */
    @Structure.FieldOrder({"VolumeSerialNumber", "FileId"})
    final class FILE_ID_INFO extends Structure {
        public long VolumeSerialNumber;
        public byte[] FileId = new byte[16];

        public FILE_ID_INFO() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _FILE_STANDARD_INFO { LARGE_INTEGER AllocationSize; LARGE_INTEGER
     * EndOfFile; DWORD NumberOfLinks; BOOLEAN DeletePending; BOOLEAN Directory; } FILE_STANDARD_INFO;}
     * (24 bytes)
     */
    @Structure.FieldOrder({"AllocationSize", "EndOfFile", "NumberOfLinks", "DeletePending", "Directory"})
    final class FILE_STANDARD_INFO extends Structure {
        public long AllocationSize;
        public long EndOfFile;
        public int NumberOfLinks;
        public byte DeletePending;
        public byte Directory;

        public FILE_STANDARD_INFO() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /** {@code typedef struct _FILE_ATTRIBUTE_TAG_INFO { DWORD FileAttributes; DWORD ReparseTag; } FILE_ATTRIBUTE_TAG_INFO;} (8 bytes) */
    @Structure.FieldOrder({"FileAttributes", "ReparseTag"})
    final class FILE_ATTRIBUTE_TAG_INFO extends Structure {
        public int FileAttributes;
        public int ReparseTag;

        public FILE_ATTRIBUTE_TAG_INFO() {
            super(ALIGN_MSVC);
        }
    }

    /**
     * {@code typedef struct _FILE_RENAME_INFO { union { BOOLEAN ReplaceIfExists; DWORD Flags; };
     * HANDLE RootDirectory; DWORD FileNameLength; WCHAR FileName[1]; } FILE_RENAME_INFO;}
     * (24 bytes on 64-bit; FileName at 20). Used only for its offsets: the call passes a buffer of
     * {@code offsetof(FileName)} plus the name, written at these offsets.
     */
    @Structure.FieldOrder({"Flags", "RootDirectory", "FileNameLength", "FileName"})
    final class FILE_RENAME_INFO extends Structure {
        public int Flags;
        public Pointer RootDirectory;
        public int FileNameLength;
        public short[] FileName = new short[1];

        public FILE_RENAME_INFO() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _OVERLAPPED { ULONG_PTR Internal; ULONG_PTR InternalHigh; union {
     * struct { DWORD Offset; DWORD OffsetHigh; }; PVOID Pointer; }; HANDLE hEvent; } OVERLAPPED;}
     * (32 bytes on 64-bit)
     */
    @Structure.FieldOrder({"Internal", "InternalHigh", "Offset", "OffsetHigh", "hEvent"})
    final class OVERLAPPED extends Structure {
        public Pointer Internal;
        public Pointer InternalHigh;
        public int Offset;
        public int OffsetHigh;
        public Pointer hEvent;

        public OVERLAPPED() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /** {@code typedef struct _FILETIME { DWORD dwLowDateTime; DWORD dwHighDateTime; } FILETIME;} (8 bytes) */
    @Structure.FieldOrder({"dwLowDateTime", "dwHighDateTime"})
    final class FILETIME extends Structure {
        public int dwLowDateTime;
        public int dwHighDateTime;

        public FILETIME() {
            super(ALIGN_MSVC);
        }

        long ticks() {
            return (Integer.toUnsignedLong(dwHighDateTime) << 32) | Integer.toUnsignedLong(dwLowDateTime);
        }
    }
}
