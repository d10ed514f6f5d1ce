package spice.authority.host.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.Run;
import spice.authority.snapshot.payload.Message;

/**
 * Bit flips and truncations of a real store (the database or its WAL) before recovery: it either
 * refuses (a {@link StoreException}, or a decision with a named reason) or resumes runs that are
 * intact (the history and the events it serves are the ones host A recorded). Nothing else is
 * thrown. {@code -Dhoststore.fuzz.iterations=N} runs longer (default 40; seed printed).
 */
class CorruptStoreFuzzTest {
    private static final int ITERATIONS = Integer.getInteger("hoststore.fuzz.iterations", 40);

    /** What host A left of a suspended run: its history and events. */
    private record Original(List<Message> history, List<Event> events) {
    }

    @Test
    void corrupted_stores_refuse_or_resume_only_intact_runs(@TempDir Path tmp) throws Exception {
        long seed = Long.getLong("hoststore.fuzz.seed", System.nanoTime());
        Random random = new Random(seed);
        int refusedOpen = 0;
        int resumed = 0;
        int refusedRuns = 0;
        int reported = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            Path dir = tmp.resolve("i" + i);
            Files.createDirectories(dir);
            try (Fixture f = new Fixture(dir)) {
                Map<String, Original> originals = new HashMap<>();
                Path image;
                try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db")); Engine engine = f.engine(a)) {
                    for (int r = 1; r <= 3; r++) {
                        Run run = engine.start("run-" + r, ScriptedAgent.DEFINITION, "hello");
                        for (int t = 0; t < r; t++) {
                            run.runTurn();
                        }
                        if (r < 3) {
                            run.suspend();
                            originals.put(run.runId(), new Original(run.history(), run.events().readAfter(0)));
                        }
                    }
                    image = f.crashImage(a, "b");
                }
                f.state.endAllSessions();
                String what = corrupt(image, random);
                try (HostStore b = HostStore.open(image); Engine engine = f.engine(b)) {
                    List<RecoveryDecision> ds = b.recover(engine);
                    for (RecoveryDecision d : ds) {
                        assertThat(d.reason()).as(what).isNotNull();
                        if (d.outcome() == RecoveryDecision.Outcome.RESUMED) {
                            resumed++;
                            Original o = originals.get(d.runId());
                            assertThat(o).as(what + ": resumed a run host A never suspended: " + d).isNotNull();
                            assertThat(d.run().history()).as(what).isEqualTo(o.history());
                            List<Event> served = d.run().events().readAfter(0);
                            assertThat(served.subList(0, o.events().size())).as(what).isEqualTo(o.events());
                        } else if (d.outcome() == RecoveryDecision.Outcome.REFUSED) {
                            refusedRuns++;
                        } else {
                            reported++;
                        }
                    }
                } catch (StoreException refused) {
                    refusedOpen++; // the documented exception, with its reason
                    assertThat(refused.getMessage()).as(what).isNotBlank();
                }
            }
        }
        System.out.printf("CorruptStoreFuzzTest: seed %d, %d stores: %d refused at open or recover, %d runs refused, "
                + "%d reported or resolved, %d intact runs resumed%n", seed, ITERATIONS, refusedOpen, refusedRuns, reported,
                resumed);
    }

    /** Flips bits in, or truncates, the database or its WAL; says what it did. */
    private static String corrupt(Path db, Random random) throws IOException {
        if (random.nextBoolean()) {
            // Half the stores have their WAL folded into the database first, so that flips hit b-tree
            // pages (rows, payloads, envelopes, digests) rather than WAL frames SQLite would skip.
            try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db);
                 java.sql.Statement st = c.createStatement()) {
                st.execute("PRAGMA wal_checkpoint(TRUNCATE)");
            } catch (java.sql.SQLException e) {
                throw new IOException(e);
            }
        }
        Path wal = Path.of(db + "-wal");
        Path target = Files.exists(wal) && Files.size(wal) > 0 && random.nextBoolean() ? wal : db;
        long size = Files.size(target);
        if (random.nextInt(4) == 0) {
            long to = size == 0 ? 0 : (long) (random.nextDouble() * size);
            try (FileChannel ch = FileChannel.open(target, StandardOpenOption.WRITE)) {
                ch.truncate(to);
            }
            return target.getFileName() + " truncated to " + to + " of " + size;
        }
        StringBuilder s = new StringBuilder(target.getFileName() + " bits flipped at");
        int flips = 1 + random.nextInt(8);
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            for (int k = 0; k < flips && size > 0; k++) {
                long at = (long) (random.nextDouble() * size);
                ByteBuffer b = ByteBuffer.allocate(1);
                ch.read(b, at);
                b.flip();
                byte v = (byte) (b.get(0) ^ (1 << random.nextInt(8)));
                ch.write(ByteBuffer.wrap(new byte[] {v}), at);
                s.append(' ').append(at);
            }
        }
        return s.toString();
    }
}
