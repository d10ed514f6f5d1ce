package spice.authority.os.windows;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * An in-memory stand-in for the Windows calls ({@link WindowsCalls}), so that the module's own
 * logic (walk order, which rule is applied where, the write protocol, lock mapping, watch firing)
 * runs on Linux. It models the NT semantics the code relies on: names case-insensitive, a reparse
 * point refused by {@code OBJ_DONT_REPARSE} unless {@code FILE_OPEN_REPARSE_POINT} opens it, create
 * dispositions and their statuses, {@code FILE_DIRECTORY_FILE} / {@code FILE_NON_DIRECTORY_FILE},
 * rename and delete by handle, {@code LockFileEx} per handle.
 *
 * <p>It proves nothing about Windows itself: the real calls never ran (README.md).
 */
final class FakeWindows implements WindowsCalls {

    final class Node {
        String name;
        Node parent;
        final boolean dir;
        byte[] sd;
        int reparseTag; // 0: not a reparse point
        byte[] id;
        int links = 1;
        byte[] content = new byte[0];
        final Map<String, Node> children = new TreeMap<>();
        long lockedBy;

        Node(String name, Node parent, boolean dir, byte[] sd) {
            this.name = name;
            this.parent = parent;
            this.dir = dir;
            this.sd = sd;
            this.id = id(++nextId);
        }

        String path() {
            return parent == null ? "C:\\" : (parent.parent == null ? "C:\\" : parent.path() + "\\") + name;
        }

        Node child(String n) {
            return children.get(n.toUpperCase(Locale.ROOT));
        }

        Node mkdir(String n, byte[] sd) {
            Node c = new Node(n, this, true, sd);
            children.put(n.toUpperCase(Locale.ROOT), c);
            return c;
        }

        Node file(String n, byte[] sd, byte[] content) {
            Node c = new Node(n, this, false, sd);
            c.content = content.clone();
            children.put(n.toUpperCase(Locale.ROOT), c);
            return c;
        }
    }

    private record Handle(Node node, int access, int[] pos) {}

    /** A process or event object for the process-watch calls. */
    static final class Waitable {
        final int pid;
        final long creationTime;
        volatile boolean signalled;
        long parent;
        /** The binary user SID of the process's token; null: the fake's user. */
        byte[] userSid;

        Waitable(int pid, long creationTime) {
            this.pid = pid;
            this.creationTime = creationTime;
        }
    }

    static byte[] id(long low) {
        return ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN).putLong(0x5eed).putLong(low).putLong(0).array();
    }

    private long nextId = 100;
    private long nextHandle = 0x100;
    final Sid user;
    final Node root;
    int driveType = Win32.DRIVE_FIXED;
    /** Calls made, in order ("NtCreateFile name", "WriteFile", "FlushFileBuffers", ...). */
    final List<String> log = new ArrayList<>();
    /** A call name whose next calls fail while the predicate says so. */
    final Map<String, Predicate<String>> failures = new HashMap<>();
    /** Pid to process; 0 handle means "no such process". */
    final Map<Integer, Waitable> processes = new LinkedHashMap<>();
    private final Map<Long, Handle> handles = new HashMap<>();
    private final Map<Long, Waitable> waitables = new HashMap<>();
    /**
     * Per address family, the TCP tables {@code GetExtendedTcpTable} answers in turn: each call
     * answers the head, and a head with a successor is consumed (the table changed since).
     */
    final Map<Integer, java.util.ArrayDeque<byte[]>> tcpTables = new HashMap<>();
    /** When set, every {@code GetExtendedTcpTable} answers "needs this many bytes". */
    Integer tcpNeeded;
    /** {@code GetExtendedTcpTable} calls made, with the buffer sizes offered. */
    final List<Integer> tcpTableBuffers = new ArrayList<>();
    /** Whether renameByHandle performs the rename and then reports failure (a lost reply). */
    boolean renameSucceedsThenFails;

    FakeWindows(String userSid) {
        this.user = Sid.parse(userSid);
        this.root = new Node("", null, true, SdBuilder.ancestor().owner(SdBuilder.TRUSTED_INSTALLER).build());
    }

    /** The stock layout C:\Users\me with a profile DACL; returns the profile directory. */
    Node profile() {
        Node users = root.mkdir("Users", SdBuilder.ancestor().build());
        return users.mkdir("me", new SdBuilder().owner(SdBuilder.SYSTEM)
                .allow(SdBuilder.OI | SdBuilder.CI | SdBuilder.ID, SdBuilder.FULL, SdBuilder.SYSTEM)
                .allow(SdBuilder.OI | SdBuilder.CI | SdBuilder.ID, SdBuilder.FULL, user.toString()).build());
    }

    int openHandles() {
        return handles.size();
    }

    /** The whole tree as text, to prove that a refusal changed nothing. */
    String snapshot() {
        StringBuilder sb = new StringBuilder();
        dump(root, sb);
        return sb.toString();
    }

    private void dump(Node n, StringBuilder sb) {
        sb.append(n.path()).append(n.dir ? "/" : "").append(' ').append(Arrays.hashCode(n.sd)).append(' ')
                .append(Arrays.toString(n.content)).append(' ').append(n.links).append('\n');
        for (Node c : n.children.values()) {
            dump(c, sb);
        }
    }

    private void maybeFail(String call, String arg) throws WindowsException {
        Predicate<String> p = failures.get(call);
        if (p != null && p.test(arg)) {
            throw WindowsException.win32(call, 1117); // ERROR_IO_DEVICE
        }
    }

    private long newHandle(Node n, int access) {
        long h = nextHandle += 4;
        handles.put(h, new Handle(n, access, new int[1]));
        return h;
    }

    private Handle handle(long h) throws WindowsException {
        Handle x = handles.get(h);
        if (x == null) {
            throw WindowsException.win32("handle", 6); // ERROR_INVALID_HANDLE
        }
        return x;
    }

    /** How many times the helper's own SID was read. */
    int currentUserSidReads;

    @Override
    public synchronized byte[] currentUserSid() {
        currentUserSidReads++;
        return user.binary();
    }

    @Override
    public synchronized int getDriveType(String volumeRoot) {
        return driveType;
    }

    @Override
    public synchronized long openVolumeRoot(String volumeRoot) throws WindowsException {
        log.add("CreateFileW " + volumeRoot);
        return newHandle(root, 0);
    }

    @Override
    public synchronized Created ntCreateFile(long rootHandle, String name, int access, int share, int disposition,
                                             int options, byte[] securityDescriptor) throws WindowsException {
        log.add("NtCreateFile " + name + (disposition == Win32.FILE_CREATE ? " CREATE" : ""));
        maybeFail("NtCreateFile", name);
        Node parent = handle(rootHandle).node;
        if (name.isEmpty()) {
            return new Created(newHandle(parent, access), false);
        }
        Node c = parent.child(name);
        if (c != null) {
            if (disposition == Win32.FILE_CREATE) {
                throw WindowsException.nt("NtCreateFile", Win32.STATUS_OBJECT_NAME_COLLISION);
            }
            if (c.reparseTag != 0 && (options & Win32.FILE_OPEN_REPARSE_POINT) == 0) {
                throw WindowsException.nt("NtCreateFile", Win32.STATUS_REPARSE_POINT_ENCOUNTERED);
            }
            if (c.reparseTag == 0 || (options & Win32.FILE_OPEN_REPARSE_POINT) == 0) {
                if ((options & Win32.FILE_DIRECTORY_FILE) != 0 && !c.dir) {
                    throw WindowsException.nt("NtCreateFile", Win32.STATUS_NOT_A_DIRECTORY);
                }
                if ((options & Win32.FILE_NON_DIRECTORY_FILE) != 0 && c.dir) {
                    throw WindowsException.nt("NtCreateFile", Win32.STATUS_FILE_IS_A_DIRECTORY);
                }
            }
            return new Created(newHandle(c, access), false);
        }
        if (disposition == Win32.FILE_OPEN) {
            throw WindowsException.nt("NtCreateFile", Win32.STATUS_OBJECT_NAME_NOT_FOUND);
        }
        byte[] sd = securityDescriptor != null ? securityDescriptor.clone()
                : new SdBuilder().owner(user.toString()).allow(SdBuilder.ID, SdBuilder.FULL, user.toString()).build();
        Node n = (options & Win32.FILE_DIRECTORY_FILE) != 0 ? parent.mkdir(name, sd) : parent.file(name, sd, new byte[0]);
        return new Created(newHandle(n, access), true);
    }

    @Override
    public synchronized void closeHandle(long handle) {
        Handle h = handles.remove(handle);
        if (h != null && h.node.lockedBy == handle) {
            h.node.lockedBy = 0;
        }
        Waitable w = waitables.remove(handle);
        if (w != null) {
            notifyAll();
        }
    }

    @Override
    public synchronized byte[] fileIdInfo(long handle) throws WindowsException {
        return handle(handle).node.id.clone();
    }

    @Override
    public synchronized AttributeTag attributeTag(long handle) throws WindowsException {
        Node n = handle(handle).node;
        int a = (n.dir ? Win32.FILE_ATTRIBUTE_DIRECTORY : 0) | (n.reparseTag != 0 ? Win32.FILE_ATTRIBUTE_REPARSE_POINT : 0);
        return new AttributeTag(a, n.reparseTag);
    }

    @Override
    public synchronized StandardInfo standardInfo(long handle) throws WindowsException {
        Node n = handle(handle).node;
        return new StandardInfo(n.content.length, n.links, false, n.dir);
    }

    @Override
    public synchronized byte[] securityInfo(long handle) throws WindowsException {
        return handle(handle).node.sd.clone();
    }

    @Override
    public synchronized String finalPath(long handle) throws WindowsException {
        return "\\\\?\\" + handle(handle).node.path();
    }

    @Override
    public synchronized int read(long handle, byte[] buf, int off, int len) throws WindowsException {
        Handle h = handle(handle);
        int n = Math.max(0, Math.min(len, h.node.content.length - h.pos[0]));
        System.arraycopy(h.node.content, h.pos[0], buf, off, n);
        h.pos[0] += n;
        return n;
    }

    @Override
    public synchronized int write(long handle, byte[] buf, int off, int len) throws WindowsException {
        log.add("WriteFile");
        maybeFail("WriteFile", "");
        Handle h = handle(handle);
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(h.node.content, 0, h.pos[0]);
        o.write(buf, off, len);
        h.node.content = o.toByteArray();
        h.pos[0] += len;
        return len;
    }

    @Override
    public synchronized void flush(long handle) throws WindowsException {
        log.add("FlushFileBuffers");
        maybeFail("FlushFileBuffers", "");
        handle(handle);
    }

    @Override
    public synchronized void renameByHandle(long handle, long directory, String name) throws WindowsException {
        log.add("Rename " + name);
        Node n = handle(handle).node;
        Node d = handle(directory).node;
        if (renameSucceedsThenFails || !failures.containsKey("Rename")) {
            Node old = d.child(name);
            if (old != null && old.dir) {
                throw WindowsException.win32("Rename", Win32.ERROR_ACCESS_DENIED);
            }
            n.parent.children.remove(n.name.toUpperCase(Locale.ROOT));
            n.name = name;
            n.parent = d;
            d.children.put(name.toUpperCase(Locale.ROOT), n);
        }
        maybeFail("Rename", name);
    }

    @Override
    public synchronized void deleteByHandle(long handle) throws WindowsException {
        Node n = handle(handle).node;
        log.add("Delete " + n.name);
        n.parent.children.remove(n.name.toUpperCase(Locale.ROOT));
    }

    @Override
    public synchronized boolean lockFileEx(long handle, boolean failImmediately) throws WindowsException {
        Node n = handle(handle).node;
        if (n.lockedBy == 0 || n.lockedBy == handle) {
            n.lockedBy = handle;
            return true;
        }
        if (failImmediately) {
            return false;
        }
        throw new IllegalStateException("the fake cannot block");
    }

    @Override
    public synchronized void unlockFileEx(long handle) throws WindowsException {
        Node n = handle(handle).node;
        if (n.lockedBy == handle) {
            n.lockedBy = 0;
        }
    }

    @Override
    public synchronized int readDirectory(long handle, byte[] buf, boolean restart) throws WindowsException {
        if (!restart) {
            return 0;
        }
        Node d = handle(handle).node;
        List<String> names = new ArrayList<>(List.of(".", ".."));
        d.children.values().forEach(c -> names.add(c.name));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < names.size(); i++) {
            byte[] nm = names.get(i).getBytes(StandardCharsets.UTF_16LE);
            int padded = (DirectoryEntries.NAME_OFFSET + nm.length + 7) & ~7;
            ByteBuffer r = ByteBuffer.allocate(padded).order(ByteOrder.LITTLE_ENDIAN);
            r.putInt(0, i == names.size() - 1 ? 0 : padded);
            r.putInt(DirectoryEntries.NAME_LENGTH_OFFSET, nm.length);
            r.put(DirectoryEntries.NAME_OFFSET, nm);
            out.writeBytes(r.array());
        }
        byte[] all = out.toByteArray();
        System.arraycopy(all, 0, buf, 0, all.length);
        return buf.length;
    }

    // ---- processes ----

    synchronized Waitable spawn(int pid, long creationTime) {
        Waitable w = new Waitable(pid, creationTime);
        processes.put(pid, w);
        return w;
    }

    synchronized void exit(int pid) {
        processes.get(pid).signalled = true;
        notifyAll();
    }

    @Override
    public synchronized long openProcess(int pid) throws WindowsException {
        processOpens.merge(pid, 1, Integer::sum);
        maybeFail("OpenProcess", String.valueOf(pid));
        Waitable w = processes.get(pid);
        if (w == null) {
            return 0;
        }
        long h = nextHandle += 4;
        waitables.put(h, w);
        return h;
    }

    @Override
    public synchronized long processCreationTime(long process) throws WindowsException {
        Waitable w = waitables.get(process);
        if (w == null) {
            throw WindowsException.win32("GetProcessTimes", 6);
        }
        return w.creationTime;
    }

    @Override
    public synchronized long parentProcessId(long process) throws WindowsException {
        Waitable w = waitables.get(process);
        if (w == null) {
            throw WindowsException.nt("NtQueryInformationProcess", 0xC0000008);
        }
        return w.parent;
    }

    @Override
    public synchronized long createEvent() {
        long h = nextHandle += 4;
        waitables.put(h, new Waitable(0, 0));
        return h;
    }

    @Override
    public synchronized void setEvent(long event) throws WindowsException {
        Waitable w = waitables.get(event);
        if (w == null) {
            throw WindowsException.win32("SetEvent", 6);
        }
        w.signalled = true;
        notifyAll();
    }

    @Override
    public synchronized int waitForAny(long[] hs, int millis) throws WindowsException {
        long deadline = System.nanoTime() + (millis < 0 ? Long.MAX_VALUE / 2 : millis * 1_000_000L);
        while (true) {
            for (int i = 0; i < hs.length; i++) {
                Waitable w = waitables.get(hs[i]);
                if (w == null) {
                    throw WindowsException.win32("WaitForMultipleObjects", 6);
                }
                if (w.signalled) {
                    return i;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return -1;
            }
            try {
                wait(Math.max(1, left / 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw WindowsException.win32("WaitForMultipleObjects", 1223);
            }
        }
    }

    synchronized int openWaitables() {
        return waitables.size();
    }

    // ---- process users and the TCP table ----

    /** {@code OpenProcess} calls per pid: one per {@code openProcess} and one per {@code processUser}. */
    final Map<Integer, Integer> processOpens = new HashMap<>();

    /** One open of the process: its SID and creation time answer about the same {@link Waitable}. */
    @Override
    public synchronized ProcessUser processUser(int pid) throws WindowsException {
        processOpens.merge(pid, 1, Integer::sum);
        maybeFail("OpenProcessToken", String.valueOf(pid));
        Waitable w = processes.get(pid);
        if (w == null) {
            return null;
        }
        return new ProcessUser(w.userSid != null ? w.userSid.clone() : user.binary(), w.creationTime);
    }

    @Override
    public synchronized int getExtendedTcpTable(int family, byte[] buf) throws WindowsException {
        tcpTableBuffers.add(buf.length);
        maybeFail("GetExtendedTcpTable", String.valueOf(family));
        if (tcpNeeded != null) {
            return tcpNeeded;
        }
        java.util.ArrayDeque<byte[]> q = tcpTables.get(family);
        byte[] table = q == null || q.isEmpty() ? new byte[TcpTable.HEADER] : q.size() > 1 ? q.poll() : q.peek();
        if (table.length > buf.length) {
            return table.length;
        }
        Arrays.fill(buf, (byte) 0x5a); // what lies beyond the table is not zero
        System.arraycopy(table, 0, buf, 0, table.length);
        return 0;
    }

    /** Queues a TCP table for {@code family}. */
    synchronized void tcpTable(int family, byte[] table) {
        tcpTables.computeIfAbsent(family, f -> new java.util.ArrayDeque<>()).add(table);
    }
}
