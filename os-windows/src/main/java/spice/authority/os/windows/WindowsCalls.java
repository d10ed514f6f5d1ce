package spice.authority.os.windows;

/**
 * The Windows calls the secure directory and the process watcher make, behind one small interface
 * with plain Java types (as os-posix's {@code Syscalls}): {@link WindowsSecureDirectory}, its
 * {@link WindowsPathWalk}, its locks and {@link WindowsProcessWatcher} reach the OS only through
 * the instance they were given. Production code passes {@link #jna()}; tests pass a fake, so no
 * production class carries a test hook. A handle is its numeric value; 0 is never a valid handle.
 *
 * <p><b>Guarantees</b> (of {@link #jna()}, and expected of every implementation). Each method is
 * one Windows call (or the fixed sequence its Javadoc names); a failure is a stackless
 * {@link WindowsException} carrying the error captured for that call. Buffers that may hold key
 * material are zeroed. Safe for use by several threads.
 */
interface WindowsCalls {

    /** The real calls, through the JNA doors. Loading them needs Windows. */
    static WindowsCalls jna() {
        return JnaWindowsCalls.INSTANCE;
    }

    /** The attributes and reparse tag of an open file ({@code FILE_ATTRIBUTE_TAG_INFO}). */
    record AttributeTag(int attributes, int reparseTag) {
        boolean isReparsePoint() {
            return (attributes & Win32.FILE_ATTRIBUTE_REPARSE_POINT) != 0;
        }

        boolean isDirectory() {
            return (attributes & Win32.FILE_ATTRIBUTE_DIRECTORY) != 0;
        }
    }

    /** {@code FILE_STANDARD_INFO} of an open file. */
    record StandardInfo(long endOfFile, int numberOfLinks, boolean deletePending, boolean directory) {}

    /** A handle from {@code NtCreateFile} and whether the call created the file ({@code FILE_CREATED}). */
    record Created(long handle, boolean created) {}

    /**
     * The binary SID of the user of this process's token: {@code OpenProcessToken(TOKEN_QUERY)},
     * {@code GetTokenInformation(TokenUser)}, {@code GetLengthSid}.
     */
    byte[] currentUserSid() throws WindowsException;

    /**
     * The user and the creation time of a process, both read through one handle of it: a pid
     * reused between two opens cannot mix two processes' answers.
     *
     * @param userSid the binary SID of the user of the process's token
     * @param creationTime {@code GetProcessTimes}' creation time, 100 ns ticks since 1601 UTC
     */
    record ProcessUser(byte[] userSid, long creationTime) {}

    /**
     * The user and creation time of process {@code pid}, from ONE handle:
     * {@code OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION)}, then {@code OpenProcessToken(TOKEN_QUERY)},
     * {@code GetTokenInformation(TokenUser)}, {@code GetLengthSid} and {@code GetProcessTimes} on that
     * handle; the handles are closed.
     *
     * @return the answer, or null when there is no such process ({@code OpenProcess} answers
     *     {@code ERROR_INVALID_PARAMETER})
     * @throws WindowsException when the process or its token cannot be opened or read (for example
     *     {@code ERROR_ACCESS_DENIED} for a protected process)
     */
    ProcessUser processUser(int pid) throws WindowsException;

    /**
     * {@code GetExtendedTcpTable(buf, &size, FALSE, family, TCP_TABLE_OWNER_MODULE_CONNECTIONS, 0)}:
     * the family's TCP connections with their owning pids and creation times
     * ({@code MIB_TCPTABLE_OWNER_MODULE} for {@code AF_INET}, {@code MIB_TCP6TABLE_OWNER_MODULE} for
     * {@code AF_INET6}), copied into {@code buf} (which must not be empty).
     *
     * @return 0 when the table was written into {@code buf}; otherwise the size in bytes the table
     *     needs now ({@code ERROR_INSUFFICIENT_BUFFER}; {@code buf} then holds nothing usable)
     */
    int getExtendedTcpTable(int family, byte[] buf) throws WindowsException;

    /** {@code GetDriveTypeW} of a volume root such as {@code C:\}. */
    int getDriveType(String volumeRoot);

    /**
     * Opens a volume root ({@code C:\}) with {@code CreateFileW(READ_CONTROL | FILE_READ_ATTRIBUTES
     * | FILE_TRAVERSE | SYNCHRONIZE, share read|write|delete, OPEN_EXISTING,
     * FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)}. The drive-letter mapping is the
     * trusted volume namespace (wire-format d.8), so this is the one open by name.
     */
    long openVolumeRoot(String volumeRoot) throws WindowsException;

    /**
     * {@code NtCreateFile} of {@code name} relative to {@code root} ({@code RootDirectory}), with
     * {@code OBJ_CASE_INSENSITIVE | OBJ_DONT_REPARSE} and, when {@code securityDescriptor} is not
     * null, that self-relative descriptor for a file it creates. An empty name reopens {@code root}.
     */
    Created ntCreateFile(long root, String name, int access, int share, int disposition, int options,
                         byte[] securityDescriptor) throws WindowsException;

    /** {@code CloseHandle}; an error is ignored (the handle is gone either way). */
    void closeHandle(long handle);

    /** {@code GetFileInformationByHandleEx(FileIdInfo)}: the 24 bytes of {@code FILE_ID_INFO}. */
    byte[] fileIdInfo(long handle) throws WindowsException;

    /** {@code GetFileInformationByHandleEx(FileAttributeTagInfo)}. */
    AttributeTag attributeTag(long handle) throws WindowsException;

    /** {@code GetFileInformationByHandleEx(FileStandardInfo)}. */
    StandardInfo standardInfo(long handle) throws WindowsException;

    /**
     * {@code GetSecurityInfo(handle, SE_FILE_OBJECT, OWNER | DACL)}: a copy of the self-relative
     * descriptor ({@code GetSecurityDescriptorLength} bytes), the original freed with
     * {@code LocalFree}.
     */
    byte[] securityInfo(long handle) throws WindowsException;

    /** {@code GetFinalPathNameByHandleW(FILE_NAME_NORMALIZED | VOLUME_NAME_DOS)}. */
    String finalPath(long handle) throws WindowsException;

    /** {@code ReadFile} into {@code buf[off, off+len)}; returns the count, 0 at end of file. */
    int read(long handle, byte[] buf, int off, int len) throws WindowsException;

    /** {@code WriteFile} from {@code buf[off, off+len)}; returns the count written. */
    int write(long handle, byte[] buf, int off, int len) throws WindowsException;

    /** {@code FlushFileBuffers}. */
    void flush(long handle) throws WindowsException;

    /**
     * Renames the open file {@code handle} to {@code name} in the directory {@code directory}:
     * {@code SetFileInformationByHandle(FileRenameInfoEx)} with {@code REPLACE_IF_EXISTS |
     * POSIX_SEMANTICS} and {@code RootDirectory} set; where the file system refuses the Ex class
     * ({@code ERROR_INVALID_PARAMETER} or {@code ERROR_NOT_SUPPORTED}), {@code FileRenameInfo} with
     * {@code ReplaceIfExists}.
     */
    void renameByHandle(long handle, long directory, String name) throws WindowsException;

    /**
     * Deletes the open file {@code handle}: {@code SetFileInformationByHandle(FileDispositionInfoEx,
     * DELETE | POSIX_SEMANTICS)}, or {@code FileDispositionInfo} where the Ex class is refused.
     */
    void deleteByHandle(long handle) throws WindowsException;

    /**
     * {@code LockFileEx(LOCKFILE_EXCLUSIVE_LOCK [| LOCKFILE_FAIL_IMMEDIATELY])} on byte 0, length 1.
     *
     * @return false when the lock is held elsewhere ({@code ERROR_LOCK_VIOLATION},
     *     {@code ERROR_IO_PENDING}; wire-format d.7)
     */
    boolean lockFileEx(long handle, boolean failImmediately) throws WindowsException;

    /** {@code UnlockFileEx} of byte 0, length 1. */
    void unlockFileEx(long handle) throws WindowsException;

    /**
     * {@code GetFileInformationByHandleEx(FileFullDirectoryRestartInfo or FileFullDirectoryInfo)}.
     *
     * @return the bytes filled, 0 at the end of the directory ({@code ERROR_NO_MORE_FILES})
     */
    int readDirectory(long handle, byte[] buf, boolean restart) throws WindowsException;

    /**
     * {@code OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid)}.
     *
     * @return the handle, or 0 when there is no such process ({@code ERROR_INVALID_PARAMETER})
     */
    long openProcess(int pid) throws WindowsException;

    /** {@code GetProcessTimes}: the creation time in 100 ns ticks since 1601. */
    long processCreationTime(long process) throws WindowsException;

    /** {@code NtQueryInformationProcess(ProcessBasicInformation)}: {@code InheritedFromUniqueProcessId}. */
    long parentProcessId(long process) throws WindowsException;

    /** {@code CreateEventW(NULL, TRUE, FALSE, NULL)}: a manual-reset event. */
    long createEvent() throws WindowsException;

    /** {@code SetEvent}. */
    void setEvent(long event) throws WindowsException;

    /**
     * {@code WaitForMultipleObjects(handles, FALSE, millis)} ({@code millis} -1: INFINITE).
     *
     * @return the index of the signalled handle, or -1 on timeout
     */
    int waitForAny(long[] handles, int millis) throws WindowsException;
}
