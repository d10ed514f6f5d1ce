package spice.authority.host.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RetryPolicy;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineIdentity;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.host.engine.Tool;
import spice.authority.snapshot.SnapshotFormat;

/** A stateful fake helper on a real socket, and engines with stores on it, in one temp folder. */
final class Fixture implements AutoCloseable {
    final Path dir;
    final StatefulHelper state = new StatefulHelper();
    final FakeHelper helper;
    final Path ledger;
    final AuthorityClient client;

    Fixture(Path tmp) throws IOException {
        this.dir = tmp;
        this.helper = FakeHelper.unix(tmp.resolve("h.sock"), state);
        this.ledger = tmp.resolve("ledger");
        this.client = AuthorityClient.builder(new HelperEndpoint.Unix(tmp.resolve("h.sock"))).retry(RetryPolicy.NONE).build();
    }

    /** A private folder (0700) for stores. */
    Path storeDir(String name) throws IOException {
        Path d = dir.resolve(name);
        Files.createDirectories(d);
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
        return d;
    }

    Engine engine(HostStore store) throws IOException {
        return engine(store, null, ScriptedAgent.IDENTITY);
    }

    /**
     * An engine on its own session, recording into {@code store}; in run {@code hangRun} (null:
     * none) the mutating call t1-write writes its ledger line, then blocks until interrupted.
     */
    Engine engine(HostStore store, String hangRun, EngineIdentity identity) throws IOException {
        return engine(store, hangRun, identity, SnapshotFormat.V1ALPHA2);
    }

    /** As {@link #engine(HostStore, String, EngineIdentity)}, writing and importing {@code format}. */
    Engine engine(HostStore store, String hangRun, EngineIdentity identity, SnapshotFormat format) throws IOException {
        Tool ledgerTool = ScriptedAgent.appendLedger(ledger, null);
        Tool hanging = Tool.of(ledgerTool.definition(), (runId, callId, arguments) -> {
            var result = ledgerTool.call(runId, callId, arguments);
            if (runId.equals(hangRun) && callId.equals("t1-write")) {
                new java.util.concurrent.CountDownLatch(1).await();
            }
            return result;
        });
        return Engine.builder(ScriptedAgent.model(), StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                        List.of(ScriptedAgent.readNotes(), hanging)))
                .identity(identity).format(format).recorder(store).open(client);
    }

    /**
     * What a crash leaves on disk, taken while the writer is quiet: the database and its WAL copied
     * to {@code name} in a new private folder (the writer still holds the original's lock).
     */
    Path crashImage(HostStore store, String name) throws IOException {
        Path to = storeDir(name).resolve("host.db");
        Files.copy(store.file(), to, StandardCopyOption.COPY_ATTRIBUTES);
        Path wal = Path.of(store.file() + "-wal");
        if (Files.exists(wal)) {
            Files.copy(wal, Path.of(to + "-wal"), StandardCopyOption.COPY_ATTRIBUTES);
        }
        return to;
    }

    List<String> ledgerLines() throws IOException {
        return Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
    }

    @Override
    public void close() throws Exception {
        helper.close();
    }
}
