package spice.authority.core;

import java.util.HashMap;
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
 * survives a simulated power loss ({@link #afterCrash}).
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
        /** Renamed over the target (visible), directory not yet fsynced. */
        AFTER_RENAME_BEFORE_DIR_FSYNC
    }

    private final Map<String, byte[]> visible = new HashMap<>();
    private final Map<String, byte[]> durable = new HashMap<>();
    private final Map<String, Object> held = new HashMap<>();
    private final AtomicInteger writes = new AtomicInteger();
    private Step faultStep;
    private int faultOnWrite = -1;
    private boolean renameDurableOnCrash;
    private boolean faultIsError;
    private volatile String revalidateRefusal;
    private volatile Runnable onRevalidate;
    private boolean closed;

    MemoryDirectory() {}

    /** A fresh directory holding what was durable here (power loss after a crash). */
    synchronized MemoryDirectory afterCrash() {
        MemoryDirectory d = new MemoryDirectory();
        d.visible.putAll(durable);
        d.durable.putAll(durable);
        return d;
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
    }

    synchronized void deleteFile(String name) {
        visible.remove(name);
        durable.remove(name);
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
    public synchronized byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
        FileNames.requireValid(path(), name);
        checkOpen();
        byte[] b = visible.get(name);
        if (b == null) {
            throw new DirectoryRefusedException(Category.MISSING, path() + "/" + name, "no such file");
        }
        if (b.length > maxBytes) {
            throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "larger than " + maxBytes + " bytes");
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
            int n = writes.getAndIncrement();
            fault = n == faultOnWrite ? faultStep : null;
            if (fault != null && fault != Step.AFTER_RENAME_BEFORE_DIR_FSYNC) {
                // Steps before the rename: the temporary is removed; the target is untouched.
                throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "injected fault " + fault);
            }
            visible.put(name, data.clone());
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
            visible.putIfAbsent(name, new byte[0]);
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
