package spice.authority.os.windows;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.WString;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;

/**
 * The production {@link WindowsCalls}: each call goes through {@link Kernel32}, {@link Advapi32},
 * {@link Ntdll} or {@link Iphlpapi}. Stateless; the doors load on first use, so this class must only
 * be used on Windows. Together with the four doors it is the only code of this module that touches JNA.
 *
 * <p>Errors are read with {@code Native.getLastError()} immediately after the failing call, on the
 * calling thread: JNA captures the value per call and per thread. Native buffers that held file
 * content are cleared before they are released. Every native buffer handed to a call is kept
 * reachable until the call returns ({@link Reference#reachabilityFence}).
 *
 * <p>NOT RUN: this class has never run; it compiles on Linux and is exercised only by the
 * {@code @EnabledOnOs(WINDOWS)} tests (see README.md).
 */
final class JnaWindowsCalls implements WindowsCalls {

    static final JnaWindowsCalls INSTANCE = new JnaWindowsCalls();

    private static final int READ_CONTROL = AccessRights.READ_CONTROL;
    private static final int SYNCHRONIZE = AccessRights.SYNCHRONIZE;
    private static final int RENAME_NAME_OFFSET;
    private static final int RENAME_ROOT_OFFSET;
    private static final int RENAME_LENGTH_OFFSET;
    private static final int RENAME_MIN_SIZE;

    static {
        Kernel32.FILE_RENAME_INFO layout = new Kernel32.FILE_RENAME_INFO();
        RENAME_NAME_OFFSET = layout.offsetOf("FileName");
        RENAME_ROOT_OFFSET = layout.offsetOf("RootDirectory");
        RENAME_LENGTH_OFFSET = layout.offsetOf("FileNameLength");
        RENAME_MIN_SIZE = layout.size();
    }

    private JnaWindowsCalls() {}

    /** The loaded doors, on first use (Windows only). Kept out of the door interfaces: see {@link Kernel32}. */
    private static final class Doors {
        static final Kernel32 KERNEL32 = Native.load("kernel32", Kernel32.class);
        static final Advapi32 ADVAPI32 = Native.load("advapi32", Advapi32.class);
        static final Ntdll NTDLL = Native.load("ntdll", Ntdll.class);
        static final Iphlpapi IPHLPAPI = Native.load("iphlpapi", Iphlpapi.class);
    }

    private static Pointer h(long handle) {
        return new Pointer(handle);
    }

    private static long value(Pointer p) {
        return Pointer.nativeValue(p);
    }

    private static WindowsException lastError(String call) {
        return WindowsException.win32(call, Native.getLastError());
    }

    private static byte[] utf16(String s) {
        return s.getBytes(StandardCharsets.UTF_16LE);
    }

    @Override
    public byte[] currentUserSid() throws WindowsException {
        return tokenUserSid(Doors.KERNEL32.GetCurrentProcess());
    }

    @Override
    public ProcessUser processUser(int pid) throws WindowsException {
        Pointer p = Doors.KERNEL32.OpenProcess(Win32.PROCESS_QUERY_LIMITED_INFORMATION, false, pid);
        if (p == null) {
            int err = Native.getLastError();
            if (err == Win32.ERROR_INVALID_PARAMETER) {
                return null; // no such process
            }
            throw WindowsException.win32("OpenProcess", err);
        }
        try {
            // SECURITY: the SID and the creation time come from this one handle, so both describe
            // the same process even if the pid is reused meanwhile.
            byte[] sid = tokenUserSid(p);
            return new ProcessUser(sid, creationTime(p));
        } finally {
            Doors.KERNEL32.CloseHandle(p);
        }
    }

    /** The user SID of a process's primary token (the process handle stays the caller's). */
    private static byte[] tokenUserSid(Pointer process) throws WindowsException {
        PointerByReference token = new PointerByReference();
        if (!Doors.ADVAPI32.OpenProcessToken(process, Win32.TOKEN_QUERY, token)) {
            throw lastError("OpenProcessToken");
        }
        try {
            IntByReference needed = new IntByReference();
            if (!Doors.ADVAPI32.GetTokenInformation(token.getValue(), Win32.TokenUser, null, 0, needed)) {
                int err = Native.getLastError();
                if (err != Win32.ERROR_INSUFFICIENT_BUFFER) {
                    throw WindowsException.win32("GetTokenInformation", err);
                }
            }
            // Read for every TCP connection (processUser): freed here, on every path, not left to the cleaner.
            try (Memory buf = new Memory(Math.max(needed.getValue(), 16))) {
                if (!Doors.ADVAPI32.GetTokenInformation(token.getValue(), Win32.TokenUser, buf, (int) buf.size(), needed)) {
                    throw lastError("GetTokenInformation");
                }
                Pointer sid = buf.getPointer(0); // TOKEN_USER.User.Sid
                if (!Doors.ADVAPI32.IsValidSid(sid)) {
                    throw WindowsException.win32("IsValidSid", Win32.ERROR_INVALID_PARAMETER);
                }
                return sid.getByteArray(0, Doors.ADVAPI32.GetLengthSid(sid));
            }
        } finally {
            Doors.KERNEL32.CloseHandle(token.getValue());
        }
    }

    @Override
    public int getExtendedTcpTable(int family, byte[] buf) throws WindowsException {
        // The table can be megabytes: its native copy is freed here, not left to the cleaner.
        try (Memory m = new Memory(buf.length)) {
            IntByReference size = new IntByReference(buf.length);
            int r = Doors.IPHLPAPI.GetExtendedTcpTable(m, size, false, family,
                    Win32.TCP_TABLE_OWNER_MODULE_CONNECTIONS, 0);
            if (r == Win32.ERROR_INSUFFICIENT_BUFFER) {
                int needed = size.getValue();
                // A DWORD size of 2^31 or more reads as negative: pass it on as "more than the
                // caller's maximum" rather than as a small size.
                return needed < 0 ? Integer.MAX_VALUE : Math.max(needed, 1);
            }
            if (r != 0) {
                throw WindowsException.win32("GetExtendedTcpTable", r);
            }
            m.read(0, buf, 0, buf.length);
            return 0;
        }
    }

    @Override
    public int getDriveType(String volumeRoot) {
        return Doors.KERNEL32.GetDriveTypeW(new WString(volumeRoot));
    }

    @Override
    public long openVolumeRoot(String volumeRoot) throws WindowsException {
        Pointer p = Doors.KERNEL32.CreateFileW(new WString(volumeRoot),
                READ_CONTROL | AccessRights.FILE_READ_ATTRIBUTES | AccessRights.FILE_TRAVERSE | SYNCHRONIZE,
                Win32.FILE_SHARE_READ | Win32.FILE_SHARE_WRITE | Win32.FILE_SHARE_DELETE, null, Win32.OPEN_EXISTING,
                Win32.FILE_FLAG_BACKUP_SEMANTICS | Win32.FILE_FLAG_OPEN_REPARSE_POINT, null);
        long v = value(p);
        if (v == 0 || v == -1) { // INVALID_HANDLE_VALUE
            throw lastError("CreateFileW");
        }
        return v;
    }

    @Override
    public Created ntCreateFile(long root, String name, int access, int share, int disposition, int options,
                                byte[] securityDescriptor) throws WindowsException {
        byte[] nameBytes = utf16(name);
        Memory nameMem = nameBytes.length == 0 ? null : new Memory(nameBytes.length);
        if (nameMem != null) {
            nameMem.write(0, nameBytes, 0, nameBytes.length);
        }
        Ntdll.UNICODE_STRING us = new Ntdll.UNICODE_STRING();
        us.Length = (short) nameBytes.length;
        us.MaximumLength = (short) nameBytes.length;
        us.Buffer = nameMem;
        us.write();
        Memory sdMem = null;
        if (securityDescriptor != null) {
            sdMem = new Memory(securityDescriptor.length);
            sdMem.write(0, securityDescriptor, 0, securityDescriptor.length);
        }
        Ntdll.OBJECT_ATTRIBUTES oa = new Ntdll.OBJECT_ATTRIBUTES();
        oa.Length = oa.size();
        oa.RootDirectory = h(root);
        oa.ObjectName = us.getPointer();
        // SECURITY: OBJ_DONT_REPARSE: no reparse point is followed anywhere in the name.
        oa.Attributes = Win32.OBJ_CASE_INSENSITIVE | Win32.OBJ_DONT_REPARSE;
        oa.SecurityDescriptor = sdMem;
        Ntdll.IO_STATUS_BLOCK iosb = new Ntdll.IO_STATUS_BLOCK();
        PointerByReference handle = new PointerByReference();
        int status = Doors.NTDLL.NtCreateFile(handle, access, oa, iosb, null, Win32.FILE_ATTRIBUTE_NORMAL, share,
                disposition, options, null, 0);
        Reference.reachabilityFence(nameMem);
        Reference.reachabilityFence(us);
        Reference.reachabilityFence(sdMem);
        if (Win32.ntFailed(status)) {
            throw WindowsException.nt("NtCreateFile", status);
        }
        return new Created(value(handle.getValue()), iosb.information() == Win32.FILE_CREATED);
    }

    @Override
    public void closeHandle(long handle) {
        Doors.KERNEL32.CloseHandle(h(handle));
    }

    @Override
    public byte[] fileIdInfo(long handle) throws WindowsException {
        Kernel32.FILE_ID_INFO info = new Kernel32.FILE_ID_INFO();
        if (!Doors.KERNEL32.GetFileInformationByHandleEx(h(handle), Win32.FileIdInfo, info.getPointer(), info.size())) {
            throw lastError("GetFileInformationByHandleEx(FileIdInfo)");
        }
        return info.getPointer().getByteArray(0, FileIds.FILE_ID_INFO_SIZE);
    }

    @Override
    public AttributeTag attributeTag(long handle) throws WindowsException {
        Kernel32.FILE_ATTRIBUTE_TAG_INFO info = new Kernel32.FILE_ATTRIBUTE_TAG_INFO();
        if (!Doors.KERNEL32.GetFileInformationByHandleEx(h(handle), Win32.FileAttributeTagInfo, info.getPointer(),
                info.size())) {
            throw lastError("GetFileInformationByHandleEx(FileAttributeTagInfo)");
        }
        info.read();
        return new AttributeTag(info.FileAttributes, info.ReparseTag);
    }

    @Override
    public StandardInfo standardInfo(long handle) throws WindowsException {
        Kernel32.FILE_STANDARD_INFO info = new Kernel32.FILE_STANDARD_INFO();
        if (!Doors.KERNEL32.GetFileInformationByHandleEx(h(handle), Win32.FileStandardInfo, info.getPointer(),
                info.size())) {
            throw lastError("GetFileInformationByHandleEx(FileStandardInfo)");
        }
        info.read();
        return new StandardInfo(info.EndOfFile, info.NumberOfLinks, info.DeletePending != 0, info.Directory != 0);
    }

    @Override
    public byte[] securityInfo(long handle) throws WindowsException {
        PointerByReference sd = new PointerByReference();
        int err = Doors.ADVAPI32.GetSecurityInfo(h(handle), Win32.SE_FILE_OBJECT,
                Win32.OWNER_SECURITY_INFORMATION | Win32.DACL_SECURITY_INFORMATION, null, null, null, null, sd);
        if (err != 0) {
            throw WindowsException.win32("GetSecurityInfo", err);
        }
        Pointer p = sd.getValue();
        if (p == null) {
            throw WindowsException.win32("GetSecurityInfo", Win32.ERROR_INVALID_PARAMETER);
        }
        try {
            int len = Doors.ADVAPI32.GetSecurityDescriptorLength(p);
            if (len < SecurityDescriptor.HEADER_SIZE || len > 64 * 1024) {
                throw WindowsException.win32("GetSecurityDescriptorLength", Win32.ERROR_INVALID_PARAMETER);
            }
            return p.getByteArray(0, len);
        } finally {
            Doors.KERNEL32.LocalFree(p);
        }
    }

    @Override
    public String finalPath(long handle) throws WindowsException {
        int chars = 32768;
        Memory buf = new Memory(2L * chars);
        int n = Doors.KERNEL32.GetFinalPathNameByHandleW(h(handle), buf, chars,
                Win32.FILE_NAME_NORMALIZED | Win32.VOLUME_NAME_DOS);
        if (n == 0) {
            throw lastError("GetFinalPathNameByHandleW");
        }
        if (n >= chars) {
            throw WindowsException.win32("GetFinalPathNameByHandleW", Win32.ERROR_INSUFFICIENT_BUFFER);
        }
        return new String(buf.getByteArray(0, 2 * n), StandardCharsets.UTF_16LE);
    }

    @Override
    public int read(long handle, byte[] buf, int off, int len) throws WindowsException {
        Memory m = new Memory(Math.max(len, 1));
        try {
            IntByReference n = new IntByReference();
            if (!Doors.KERNEL32.ReadFile(h(handle), m, len, n, null)) {
                throw lastError("ReadFile");
            }
            int got = n.getValue();
            m.read(0, buf, off, got);
            return got;
        } finally {
            m.clear(); // SECURITY: the file may be the identity key
            m.close();
        }
    }

    @Override
    public int write(long handle, byte[] buf, int off, int len) throws WindowsException {
        Memory m = new Memory(Math.max(len, 1));
        try {
            m.write(0, buf, off, len);
            IntByReference n = new IntByReference();
            if (!Doors.KERNEL32.WriteFile(h(handle), m, len, n, null)) {
                throw lastError("WriteFile");
            }
            return n.getValue();
        } finally {
            m.clear(); // SECURITY: the content may be the identity key
            m.close();
        }
    }

    @Override
    public void flush(long handle) throws WindowsException {
        if (!Doors.KERNEL32.FlushFileBuffers(h(handle))) {
            throw lastError("FlushFileBuffers");
        }
    }

    @Override
    public void renameByHandle(long handle, long directory, String name) throws WindowsException {
        byte[] nameBytes = utf16(name);
        int size = Math.max(RENAME_MIN_SIZE, RENAME_NAME_OFFSET + nameBytes.length + 2);
        Memory info = new Memory(size);
        info.clear();
        info.setInt(0, Win32.FILE_RENAME_FLAG_REPLACE_IF_EXISTS | Win32.FILE_RENAME_FLAG_POSIX_SEMANTICS);
        info.setPointer(RENAME_ROOT_OFFSET, h(directory));
        info.setInt(RENAME_LENGTH_OFFSET, nameBytes.length);
        info.write(RENAME_NAME_OFFSET, nameBytes, 0, nameBytes.length);
        if (Doors.KERNEL32.SetFileInformationByHandle(h(handle), Win32.FileRenameInfoEx, info, size)) {
            return;
        }
        int err = Native.getLastError();
        if (err != Win32.ERROR_INVALID_PARAMETER && err != Win32.ERROR_NOT_SUPPORTED
                && err != Win32.ERROR_INVALID_FUNCTION) {
            throw WindowsException.win32("SetFileInformationByHandle(FileRenameInfoEx)", err);
        }
        // No POSIX rename on this file system (FAT, older Windows): the classic class, same fields.
        info.setInt(0, 0);
        info.setByte(0, (byte) 1); // ReplaceIfExists
        if (!Doors.KERNEL32.SetFileInformationByHandle(h(handle), Win32.FileRenameInfo, info, size)) {
            throw lastError("SetFileInformationByHandle(FileRenameInfo)");
        }
    }

    @Override
    public void deleteByHandle(long handle) throws WindowsException {
        Memory info = new Memory(4);
        info.setInt(0, Win32.FILE_DISPOSITION_FLAG_DELETE | Win32.FILE_DISPOSITION_FLAG_POSIX_SEMANTICS);
        if (Doors.KERNEL32.SetFileInformationByHandle(h(handle), Win32.FileDispositionInfoEx, info, 4)) {
            return;
        }
        int err = Native.getLastError();
        if (err != Win32.ERROR_INVALID_PARAMETER && err != Win32.ERROR_NOT_SUPPORTED
                && err != Win32.ERROR_INVALID_FUNCTION) {
            throw WindowsException.win32("SetFileInformationByHandle(FileDispositionInfoEx)", err);
        }
        info.setInt(0, 0);
        info.setByte(0, (byte) 1); // FILE_DISPOSITION_INFO.DeleteFile
        if (!Doors.KERNEL32.SetFileInformationByHandle(h(handle), Win32.FileDispositionInfo, info, 1)) {
            throw lastError("SetFileInformationByHandle(FileDispositionInfo)");
        }
    }

    @Override
    public boolean lockFileEx(long handle, boolean failImmediately) throws WindowsException {
        Kernel32.OVERLAPPED ov = new Kernel32.OVERLAPPED(); // Offset 0: the lock covers byte 0
        int flags = Win32.LOCKFILE_EXCLUSIVE_LOCK | (failImmediately ? Win32.LOCKFILE_FAIL_IMMEDIATELY : 0);
        if (Doors.KERNEL32.LockFileEx(h(handle), flags, 0, 1, 0, ov)) {
            return true;
        }
        int err = Native.getLastError();
        if (err == Win32.ERROR_LOCK_VIOLATION || err == Win32.ERROR_IO_PENDING) {
            return false;
        }
        throw WindowsException.win32("LockFileEx", err);
    }

    @Override
    public void unlockFileEx(long handle) throws WindowsException {
        Kernel32.OVERLAPPED ov = new Kernel32.OVERLAPPED();
        if (!Doors.KERNEL32.UnlockFileEx(h(handle), 0, 1, 0, ov)) {
            throw lastError("UnlockFileEx");
        }
    }

    @Override
    public int readDirectory(long handle, byte[] buf, boolean restart) throws WindowsException {
        Memory m = new Memory(buf.length);
        m.clear();
        if (!Doors.KERNEL32.GetFileInformationByHandleEx(h(handle),
                restart ? Win32.FileFullDirectoryRestartInfo : Win32.FileFullDirectoryInfo, m, buf.length)) {
            int err = Native.getLastError();
            if (err == Win32.ERROR_NO_MORE_FILES) {
                return 0;
            }
            throw WindowsException.win32("GetFileInformationByHandleEx(FileFullDirectoryInfo)", err);
        }
        m.read(0, buf, 0, buf.length);
        return buf.length; // the chain ends at the record whose NextEntryOffset is 0
    }

    @Override
    public long openProcess(int pid) throws WindowsException {
        Pointer p = Doors.KERNEL32.OpenProcess(SYNCHRONIZE | Win32.PROCESS_QUERY_LIMITED_INFORMATION, false, pid);
        if (p == null) {
            int err = Native.getLastError();
            if (err == Win32.ERROR_INVALID_PARAMETER) {
                return 0; // no such process
            }
            throw WindowsException.win32("OpenProcess", err);
        }
        return value(p);
    }

    @Override
    public long processCreationTime(long process) throws WindowsException {
        return creationTime(h(process));
    }

    /** {@code GetProcessTimes}' creation time of an open process, 100 ns ticks since 1601 UTC. */
    private static long creationTime(Pointer process) throws WindowsException {
        Kernel32.FILETIME creation = new Kernel32.FILETIME();
        if (!Doors.KERNEL32.GetProcessTimes(process, creation, new Kernel32.FILETIME(), new Kernel32.FILETIME(),
                new Kernel32.FILETIME())) {
            throw lastError("GetProcessTimes");
        }
        return creation.ticks();
    }

    @Override
    public long parentProcessId(long process) throws WindowsException {
        Ntdll.PROCESS_BASIC_INFORMATION pbi = new Ntdll.PROCESS_BASIC_INFORMATION();
        int status = Doors.NTDLL.NtQueryInformationProcess(h(process), Win32.ProcessBasicInformation, pbi,
                pbi.size(), null);
        if (Win32.ntFailed(status)) {
            throw WindowsException.nt("NtQueryInformationProcess", status);
        }
        return value(pbi.InheritedFromUniqueProcessId);
    }

    @Override
    public long createEvent() throws WindowsException {
        Pointer p = Doors.KERNEL32.CreateEventW(null, true, false, null);
        if (p == null) {
            throw lastError("CreateEventW");
        }
        return value(p);
    }

    @Override
    public void setEvent(long event) throws WindowsException {
        if (!Doors.KERNEL32.SetEvent(h(event))) {
            throw lastError("SetEvent");
        }
    }

    @Override
    public int waitForAny(long[] handles, int millis) throws WindowsException {
        Pointer[] hs = new Pointer[handles.length];
        for (int i = 0; i < handles.length; i++) {
            hs[i] = h(handles[i]);
        }
        int r = Doors.KERNEL32.WaitForMultipleObjects(hs.length, hs, false, millis < 0 ? Win32.INFINITE : millis);
        if (r == Win32.WAIT_TIMEOUT) {
            return -1;
        }
        if (r == Win32.WAIT_FAILED) {
            throw lastError("WaitForMultipleObjects");
        }
        int index = r >= 0x80 ? r - 0x80 : r; // WAIT_ABANDONED_0 + i (mutexes only)
        if (index < 0 || index >= handles.length) {
            throw WindowsException.win32("WaitForMultipleObjects", Win32.ERROR_INVALID_PARAMETER);
        }
        return index;
    }

    @Override
    public String toString() {
        return "WindowsCalls.jna()";
    }
}
