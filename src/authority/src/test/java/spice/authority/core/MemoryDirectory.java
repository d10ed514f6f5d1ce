package spice.authority.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.FileIdentity;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * An in-memory {@link SecureDirectory} for authority tests, with the atomic-write protocol split
 * into its steps so that a fault or a "crash" can be injected at each one, and a durable view that
 * survives a simulated power loss ({@link #afterCrash}). Like every implementation, it marks a
 * failure before the rename {@link DirectoryRefusedException#nothingWritten()} and none from the
 * rename on.
 *
 * <p>Every visible file also has the status the file rule judges ({@link Status}): a fresh inode
 * on each create or replace (an atomic write renames a new file over the name), mode 0600, one
 * link. {@link #chmod}, {@link #addHardLink}, {@link #replaceKeepingContent} and
 * {@link #replaceWithSymlink} change it as an outside process would; {@link #read},
 * {@link #checkFile} and the destination check of {@link #writeAtomically} apply the rule.
 */
final class MemoryDirectory implements SecureDirectory {

    /** Where an injected fault strikes inside {@link #writeAtomically}. */
    enum Step {
        /** Destination checked; the temporary file is not written yet. */
        BEFORE_TEMP_WRITTEN,
        /** Temporary written, not yet fsynced. */
        AFTER_WRITE_BEFORE_FSYNC,
        /** Temporary fsynced, not yet renamed. */
        AFTER_FSYNC_BEFORE_RENAME,
        /** The rename is called and reports a failure without having taken effect. */
        RENAME_FAILS,
        /** Renamed over the target (visible), directory not yet fsynced. */
        AFTER_RENAME_BEFORE_DIR_FSYNC
    }

    /** What the file rule looks at: type, permission bits, link count and inode. */
    record Status(long inode, boolean symlink, int mode, int links) {
        Status {
            if (links < 1) {
                throw new IllegalArgumentException("links");
            }
        }
    }

    private final Map<String, byte[]> visible = new HashMap<>();
    private final Map<String, Status> status = new HashMap<>();
    private long nextInode = 100;
    private final Map<String, byte[]> durable = new HashMap<>();
    private final Map<String, Object> held = new HashMap<>();
    private final AtomicInteger writes = new AtomicInteger();
    private Step faultStep;
    private int faultOnWrite = -1;
    private boolean renameDurableOnCrash;
    private boolean faultIsError;
    private volatile String revalidateRefusal;
    private volatile DirectoryRefusedException listFailure;
    private volatile DirectoryRefusedException probeWriteFailure;
    private final AtomicInteger probeWrites = new AtomicInteger();
    private volatile Runnable onRevalidate;
    private boolean closed;

    MemoryDirectory() {}

    /** A fresh directory holding what was durable here (power loss after a crash). */
    synchronized MemoryDirectory afterCrash() {
        MemoryDirectory d = new MemoryDirectory();
        d.visible.putAll(durable);
        d.durable.putAll(durable);
        durable.keySet().forEach(d::fresh);
        return d;
    }

    /** A new inode, mode 0600, one link: what creating or atomically replacing a file gives. */
    private void fresh(String name) {
        status.put(name, new Status(nextInode++, false, 0600, 1));
    }

    /** Sets the permission bits of an existing file (as chmod from outside). */
    synchronized void chmod(String name, int mode) {
        Status s = existing(name);
        status.put(name, new Status(s.inode(), s.symlink(), mode, s.links()));
    }

    /** Gives an existing file one more hard link (as ln from outside, to a name not listed here). */
    synchronized void addHardLink(String name) {
        Status s = existing(name);
        status.put(name, new Status(s.inode(), s.symlink(), s.mode(), s.links() + 1));
    }

    /** Removes one hard link again. */
    synchronized void removeHardLink(String name) {
        Status s = existing(name);
        status.put(name, new Status(s.inode(), s.symlink(), s.mode(), s.links() - 1));
    }

    /** Puts a different file (new inode, mode 0600, one link) with the same content under the name. */
    synchronized void replaceKeepingContent(String name) {
        existing(name);
        fresh(name);
    }

    /** Puts a symbolic link (to a file with the same content) under the name. */
    synchronized void replaceWithSymlink(String name) {
        existing(name);
        status.put(name, new Status(nextInode++, true, 0777, 1));
    }

    /** Restores a name to a given status (for example one saved with {@link #statusOf}). */
    synchronized void restore(String name, Status s) {
        existing(name);
        status.put(name, s);
    }

    synchronized Status statusOf(String name) {
        return existing(name);
    }

    private Status existing(String name) {
        Status s = status.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no such file: " + name);
        }
        return s;
    }

    /** The file rule of {@link SecureDirectory}: not a symbolic link, one link, mode exactly 0600. */
    private void requireSafeFile(String name, Status s) throws DirectoryRefusedException {
        String shown = path() + "/" + name;
        if (s.symlink()) {
            throw new DirectoryRefusedException(Category.SYMLINK, shown, "is a symbolic link");
        }
        if (s.links() != 1) {
            throw new DirectoryRefusedException(Category.LINKS, shown, "has " + s.links() + " hard links, not 1");
        }
        if (s.mode() != 0600) {
            throw new DirectoryRefusedException(Category.MODE, shown,
                    "mode 0" + Integer.toOctalString(s.mode()) + ", must be exactly 0600");
        }
    }

    /** Injects a fault at {@code step} of the {@code nthWrite}-th write from now (0 = next). */
    synchronized void failAt(Step step, int nthWrite, boolean renameDurableOnCrash) {
        this.faultStep = step;
        this.faultOnWrite = writes.get() + nthWrite;
        this.renameDurableOnCrash = renameDurableOnCrash;
    }

    /** Like {@link #failAt} at the last step, but the writer throws an {@link Error} after the rename. */
    synchronized void errorAfterRename(int nthWrite) {
        failAt(Step.AFTER_RENAME_BEFORE_DIR_FSYNC, nthWrite, true);
        faultIsError = true;
    }

    synchronized void clearFault() {
        faultStep = null;
        faultOnWrite = -1;
    }

    /** Runs {@code hook} inside every {@link #revalidate()} (between an operation's two cancellation checks). */
    void onRevalidate(Runnable hook) {
        onRevalidate = hook;
    }

    /** Makes {@link #revalidate()} refuse (null restores). */
    void refuseRevalidation(String why) {
        revalidateRefusal = why;
    }

    int writeCount() {
        return writes.get();
    }

    synchronized byte[] visibleFile(String name) {
        byte[] b = visible.get(name);
        return b == null ? null : b.clone();
    }

    synchronized Map<String, byte[]> snapshotFiles() {
        Map<String, byte[]> copy = new HashMap<>();
        visible.forEach((k, v) -> copy.put(k, v.clone()));
        return copy;
    }

    synchronized void putFile(String name, byte[] content) {
        visible.put(name, content.clone());
        durable.put(name, content.clone());
        fresh(name);
    }

    synchronized void deleteFile(String name) {
        visible.remove(name);
        durable.remove(name);
        status.remove(name);
    }

    @Override
    public String path() {
        return "/memory/authority";
    }

    @Override
    public FileIdentity identity() {
        return new FileIdentity(1, 1);
    }

    @Override
    public boolean createdLeaf() {
        return false;
    }

    @Override
    public OpenMode openMode() {
        return OpenMode.CREATE_OR_VALIDATE;
    }

    @Override
    public void revalidate() throws DirectoryRefusedException {
        Runnable hook = onRevalidate;
        if (hook != null) {
            hook.run();
        }
        String why = revalidateRefusal;
        if (why != null) {
            throw new DirectoryRefusedException(Category.IDENTITY, path(), why);
        }
        if (closed) {
            throw new IllegalStateException("closed");
        }
    }

    @Override
    public synchronized FileIdentity checkFile(String name) throws DirectoryRefusedException {
        FileNames.requireValid(path(), name);
        checkOpen();
        Status s = status.get(name);
        if (s == null) {
            throw new DirectoryRefusedException(Category.MISSING, path() + "/" + name, "no such file");
        }
        requireSafeFile(name, s);
        return new FileIdentity(1, s.inode());
    }

    @Override
    public synchronized byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
        FileNames.requireValid(path(), name);
        checkOpen();
        byte[] b = visible.get(name);
        if (b == null) {
            throw new DirectoryRefusedException(Category.MISSING, path() + "/" + name, "no such file");
        }
        requireSafeFile(name, status.get(name));
        if (b.length > maxBytes) {
            throw new DirectoryRefusedException(Category.SIZE, path() + "/" + name, "larger than " + maxBytes + " bytes");
        }
        return b.clone();
    }

    @Override
    public void writeAtomically(String name, byte[] data) throws DirectoryRefusedException {
        FileNames.requireValid(path(), name);
        if (FileNames.isLockName(name)) {
            throw new IllegalArgumentException("lock files cannot be written");
        }
        Step fault;
        synchronized (this) {
            checkOpen();
            Status target = status.get(name);
            if (target != null) {
                try {
                    requireSafeFile(name, target); // d.4 step 1: the destination must pass the rule
                } catch (DirectoryRefusedException e) {
                    throw e.asNothingWritten();
                }
            }
            int n = writes.getAndIncrement();
            fault = n == faultOnWrite ? faultStep : null;
            if (fault == Step.RENAME_FAILS) {
                // The rename was called: the caller cannot know it did not take effect.
                throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "injected fault " + fault);
            }
            if (fault != null && fault != Step.AFTER_RENAME_BEFORE_DIR_FSYNC) {
                // Steps before the rename: the temporary is removed; the target is untouched.
                throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "injected fault " + fault, true);
            }
            visible.put(name, data.clone());
            fresh(name); // the renamed temporary file: a new inode
            if (fault == null || renameDurableOnCrash) {
                durable.put(name, data.clone());
            }
        }
        if (fault != null) {
            if (faultIsError) {
                throw new StackOverflowError("injected after the rename");
            }
            throw new DirectoryRefusedException(Category.IO, path(), "injected fault " + fault);
        }
    }

    /** Makes {@link #list()} fail with {@code failure} (null restores). */
    void failList(DirectoryRefusedException failure) {
        listFailure = failure;
    }

    @Override
    public synchronized List<String> list() throws DirectoryRefusedException {
        checkOpen();
        DirectoryRefusedException failure = listFailure;
        if (failure != null) {
            throw failure;
        }
        return visible.keySet().stream().sorted().toList();
    }

    /** Makes {@link #probeWrite} fail with {@code failure} (null restores). */
    void failProbeWrite(DirectoryRefusedException failure) {
        probeWriteFailure = failure;
    }

    /** Probes so far. */
    int probeWrites() {
        return probeWrites.get();
    }

    @Override
    public synchronized void probeWrite(String target) throws DirectoryRefusedException {
        FileNames.temporaryName(target, new byte[FileNames.TEMPORARY_NONCE_BYTES]); // the name rule
        checkOpen();
        probeWrites.incrementAndGet();
        DirectoryRefusedException failure = probeWriteFailure;
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Puts a file under any name, valid or not (a temporary left by a crash, a near miss, a
     * foreign file), as an outside process would.
     */
    synchronized void plant(String name, byte[] content) {
        visible.put(name, content.clone());
        durable.put(name, content.clone());
        fresh(name);
    }

    @Override
    public synchronized boolean removeTemporary(String name) throws DirectoryRefusedException {
        if (FileNames.temporaryTarget(name).isEmpty()) {
            throw new DirectoryRefusedException(Category.NAME, path() + "/" + FileNames.printable(name), "not a temporary name");
        }
        checkOpen();
        Status s = status.get(name);
        if (s == null) {
            return false;
        }
        if (s.symlink()) {
            throw new DirectoryRefusedException(Category.SYMLINK, path() + "/" + name, "is a symbolic link");
        }
        visible.remove(name);
        durable.remove(name);
        status.remove(name);
        return true;
    }

    @Override
    public StableLock lock(String name, LockMode mode) throws DirectoryRefusedException {
        FileNames.requireValid(path(), name);
        Object token = new Object();
        synchronized (this) {
            checkOpen();
            while (held.containsKey(name)) {
                if (mode == LockMode.NON_BLOCKING) {
                    throw new DirectoryRefusedException(Category.BUSY, path() + "/" + name, "locked by another owner");
                }
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "interrupted");
                }
            }
            held.put(name, token);
            if (visible.putIfAbsent(name, new byte[0]) == null) {
                fresh(name);
            }
            durable.putIfAbsent(name, new byte[0]);
        }
        return new StableLock() {
            private boolean released;

            @Override
            public String name() {
                return name;
            }

            @Override
            public FileIdentity identity() {
                return new FileIdentity(1, name.hashCode());
            }

            @Override
            public void close() {
                synchronized (MemoryDirectory.this) {
                    if (!released && held.get(name) == token) {
                        held.remove(name);
                        MemoryDirectory.this.notifyAll();
                    }
                    released = true;
                }
            }
        };
    }

    synchronized boolean isLocked(String name) {
        return held.containsKey(name);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("directory closed");
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    synchronized boolean isClosed() {
        return closed;
    }
}
