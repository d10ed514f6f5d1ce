package spice.authority.os;

import java.util.List;
import java.util.Objects;

/**
 * A {@link SecureDirectory} that forwards every call to a delegate. Subclass it to inject
 * faults in tests (for example, fail {@link #writeAtomically} after the n-th call) or to
 * observe calls, without touching the OS implementation.
 */
public abstract class ForwardingSecureDirectory implements SecureDirectory {

    private final SecureDirectory delegate;

    /** @param delegate the directory all calls go to */
    protected ForwardingSecureDirectory(SecureDirectory delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The wrapped directory. */
    protected final SecureDirectory delegate() {
        return delegate;
    }

    @Override
    public String path() {
        return delegate.path();
    }

    @Override
    public FileIdentity identity() {
        return delegate.identity();
    }

    @Override
    public boolean createdLeaf() {
        return delegate.createdLeaf();
    }

    @Override
    public OpenMode openMode() {
        return delegate.openMode();
    }

    @Override
    public void revalidate() throws DirectoryRefusedException {
        delegate.revalidate();
    }

    @Override
    public FileIdentity checkFile(String name) throws DirectoryRefusedException {
        return delegate.checkFile(name);
    }

    @Override
    public byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
        return delegate.read(name, maxBytes);
    }

    @Override
    public void writeAtomically(String name, byte[] data) throws DirectoryRefusedException {
        delegate.writeAtomically(name, data);
    }

    @Override
    public List<String> list() throws DirectoryRefusedException {
        return delegate.list();
    }

    @Override
    public void probeWrite(String target) throws DirectoryRefusedException {
        delegate.probeWrite(target);
    }

    @Override
    public boolean removeTemporary(String name) throws DirectoryRefusedException {
        return delegate.removeTemporary(name);
    }

    @Override
    public StableLock lock(String name, LockMode mode) throws DirectoryRefusedException {
        return delegate.lock(name, mode);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
