package spice.authority.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * A separate JVM that uses the run authority on a real directory, driven by the process tests:
 * <ul>
 *   <li>{@code race DIR}: for each stdin line {@code go FILE}, prepares, consumes and activates the
 *       envelope in FILE and prints {@code WON} or {@code LOST <code>}; {@code quit} ends.
 *   <li>{@code own DIR RUN_ID PAYLOAD OUT}: starts the run, signs the SUSPENDED payload, writes the
 *       envelope to OUT, prints {@code READY} and keeps the run until killed.
 * </ul>
 */
public final class AuthorityChild {
    private AuthorityChild() {}

    public static void main(String[] args) throws Exception {
        RunAuthority authority = RunAuthority.open(
                SecureDirectories.provider().open(args[1], OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
        switch (args[0]) {
            case "race" -> race(authority);
            case "own" -> own(authority, args[2], Path.of(args[3]), Path.of(args[4]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static void race(RunAuthority authority) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("quit")) {
            Envelope env = Envelope.parse(Files.readAllBytes(Path.of(line.substring(3))));
            String result;
            try {
                RunImport imp = authority.prepareImport(env, Cancellation.none());
                imp.consume(Cancellation.none());
                ActiveRun run = imp.activate(Cancellation.none());
                run.close();
                result = "WON";
            } catch (AuthorityException e) {
                result = "LOST " + e.code();
            }
            System.out.println(result);
            System.out.flush();
        }
        authority.close();
    }

    private static void own(RunAuthority authority, String runId, Path payload, Path out) throws Exception {
        ActiveRun run = authority.start(new RunId(runId), Cancellation.none());
        Envelope env = run.seal(Snapshot.decode(Files.readAllBytes(payload)), Cancellation.none()).envelope();
        Files.write(out, env.toBinary());
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000); // the subject: it owns the run until the test kills it (bounded, should the test die first)
    }
}
