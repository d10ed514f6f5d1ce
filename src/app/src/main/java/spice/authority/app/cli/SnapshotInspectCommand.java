package spice.authority.app.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.view.InspectView;
import spice.authority.app.view.JsonTree;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.payload.Snapshot;

@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        description = {
            "Show a signed SnapshotEnvelope as readable JSON.",
            "Shows the envelope fields, the digest check, the claim's shape, and a summary",
            "of the decoded payload (counts, identities; no conversation text). Accepts the",
            "binary protobuf encoding or the protobuf JSON mapping. It never says the claim",
            "is authentic: that needs the authority's key."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  the envelope is well-formed: structure (wire-format a.3), payload and agreement all pass",
            "  1  the envelope was refused (the view shows which check failed) or could not be read",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority snapshot inspect envelope.pb",
            "  spice-authority snapshot inspect envelope.json"
        })
public final class SnapshotInspectCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Envelope file (binary or JSON mapping); '-' reads standard input.")
    String file;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        byte[] bytes;
        try {
            bytes = BoundedFiles.read(file, Envelope.MAX_ENCODED_BYTES * 2);
        } catch (BoundedFiles.TooLargeException e) {
            out.println(file + ": REJECTED E-SIZE envelope larger than " + Envelope.MAX_ENCODED_BYTES + " bytes");
            return ExitCodes.REFUSED;
        } catch (IOException e) {
            out.println(file + ": UNREADABLE " + BoundedFiles.describe(e));
            return ExitCodes.REFUSED;
        }
        boolean isJson = looksLikeJson(bytes);
        Envelope env;
        try {
            env = isJson ? Envelope.parseJson(new String(bytes, StandardCharsets.UTF_8)) : Envelope.parse(bytes);
        } catch (EnvelopeRejectedException e) {
            out.println(file + ": REJECTED " + e.rule().id() + " " + e.rule().reason());
            return ExitCodes.REFUSED;
        }
        InspectView.Result v = InspectView.of(env, isJson ? "protobuf JSON mapping" : "binary protobuf", file);
        out.println(JsonTree.pretty(v.view()));
        out.flush();
        return v.ok() ? ExitCodes.OK : ExitCodes.REFUSED;
    }

    private static boolean looksLikeJson(byte[] b) {
        for (byte x : b) {
            if (x == ' ' || x == '\n' || x == '\r' || x == '\t') {
                continue;
            }
            return x == '{';
        }
        return false;
    }
}
