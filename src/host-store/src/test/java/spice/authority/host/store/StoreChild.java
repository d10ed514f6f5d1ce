package spice.authority.host.store;

import java.nio.file.Path;

/**
 * A host process for the crash tests: opens the store at {@code args[0]} as its writer, says
 * READY on standard output, then waits (its standard input open) until it is killed.
 */
public final class StoreChild {
    private StoreChild() {
    }

    public static void main(String[] args) throws Exception {
        HostStore store = HostStore.open(Path.of(args[0]));
        System.out.println("READY " + store.epoch());
        System.out.flush();
        while (System.in.read() >= 0) {
            // wait to be killed; a closed input means the test is gone
        }
        Runtime.getRuntime().halt(3); // never a clean close: the epoch stays open, as in a crash
    }
}
