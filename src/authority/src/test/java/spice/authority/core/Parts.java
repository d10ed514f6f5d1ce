package spice.authority.core;

import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;

/**
 * The parts of a {@link RunAuthority} built by hand over a {@link MemoryDirectory}, as
 * {@link RunAuthority#open} wires them, for the tests of one part at a time.
 */
final class Parts implements AutoCloseable {
    final MemoryDirectory dir;
    final AuthorityIdentity identity;
    final RecordStore store;
    final RunFences fences = new RunFences();
    final Leases leases;
    final Transitions transitions;
    final RecordLister lister;
    int shutdowns;

    Parts(MemoryDirectory dir) {
        this.dir = dir;
        this.identity = AuthorityIdentity.generate(Fixtures.random());
        dir.putFile(RecordStore.IDENTITY_KEY, identity.encode());
        FileIdentity file;
        try {
            file = RecordStore.checkIdentityFile(dir, null);
        } catch (DirectoryRefusedException e) {
            throw new AssertionError(e);
        }
        this.store = new RecordStore(dir, identity, file, spice.authority.snapshot.FormatPolicy.standard());
        this.leases = new Leases(() -> shutdowns++);
        this.transitions = new Transitions(identity, store, fences, leases, spice.authority.snapshot.FormatPolicy.standard());
        this.lister = new RecordLister(store);
    }

    Parts() {
        this(new MemoryDirectory());
    }

    @Override
    public void close() {
        identity.close();
    }
}
