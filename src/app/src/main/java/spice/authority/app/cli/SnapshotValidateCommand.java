package spice.authority.app.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PayloadRule;
import spice.authority.snapshot.payload.Snapshot;

@Command(name = "validate",
        mixinStandardHelpOptions = true,
        description = {
            "Validate v1alpha2 and v1alpha3 payloads (the JSON a host sends to be signed).",
            "The payload's version names its format. Applies every rule of that format",
            "(wire-format.md b.3-b.6; v1alpha3 adds P-WORKSPACE) and requires canonical",
            "bytes: a payload must be byte-identical to what the reference encoder emits",
            "for it. Prints one line per file:",
            "'FILE: OK <run_id> <status> <version>', 'FILE: REJECTED <rule> <reason>' or",
            "'FILE: UNREADABLE <reason>' (the file could not be read)."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  every file is a valid payload",
            "  1  at least one file was rejected or could not be read",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority snapshot validate spec-kit/payload-corpus/public/valid-*.json",
            "  spice-authority snapshot validate --json spec-kit/transcripts/tau-*.json",
            "  cat payload.json | spice-authority snapshot validate -"
        })
public final class SnapshotValidateCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Payload files; '-' reads standard input.")
    List<String> files;

    @Option(names = "--json", description = "Print a JSON array with one object per file instead of lines.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        boolean allOk = true;
        JsonGenerator g = null;
        if (json) {
            g = new JsonFactory().createGenerator(out);
            g.useDefaultPrettyPrinter();
            g.writeStartArray();
        }
        for (String file : files) {
            Verdict v = check(file);
            allOk &= v.ok;
            if (g != null) {
                g.writeStartObject();
                g.writeStringField("file", file);
                g.writeStringField("verdict", v.verdict);
                if (v.ok) {
                    g.writeStringField("version", v.snapshot.format().version());
                    g.writeStringField("run_id", v.snapshot.runId());
                    g.writeStringField("status", v.snapshot.status().wire());
                    g.writeStringField("last_sequence", Long.toUnsignedString(v.snapshot.lastSequence()));
                } else {
                    if (v.rule != null) {
                        g.writeStringField("rule", v.rule.id());
                    }
                    g.writeStringField("reason", v.reason);
                    if (v.location != null) {
                        g.writeStringField("location", v.location);
                    }
                }
                g.writeEndObject();
            } else if (v.ok) {
                out.println(file + ": OK " + v.snapshot.runId() + " " + v.snapshot.status().wire() + " "
                        + v.snapshot.format().version());
            } else if (v.rule != null) {
                out.println(file + ": REJECTED " + v.rule.id() + " " + v.reason
                        + (v.location == null ? "" : " (at " + v.location + ")"));
            } else {
                out.println(file + ": UNREADABLE " + v.reason);
            }
            out.flush();
        }
        if (g != null) {
            g.writeEndArray();
            g.flush();
            out.println();
            out.flush();
        }
        return allOk ? ExitCodes.OK : ExitCodes.REFUSED;
    }

    private record Verdict(boolean ok, String verdict, Snapshot snapshot, PayloadRule rule, String reason, String location) {}

    private static Verdict check(String file) {
        byte[] bytes;
        try {
            bytes = BoundedFiles.read(file, Snapshot.MAX_PAYLOAD_BYTES);
        } catch (BoundedFiles.TooLargeException e) {
            return new Verdict(false, "REJECTED", null, PayloadRule.P_SIZE, PayloadRule.P_SIZE.reason(), null);
        } catch (IOException e) {
            return new Verdict(false, "UNREADABLE", null, null, BoundedFiles.describe(e), null);
        }
        try {
            return new Verdict(true, "OK", Snapshot.decode(bytes), null, null, null);
        } catch (PayloadRejectedException e) {
            return new Verdict(false, "REJECTED", null, e.rule(), e.reason(), e.location()); // P-VERSION names the version
        }
    }
}
