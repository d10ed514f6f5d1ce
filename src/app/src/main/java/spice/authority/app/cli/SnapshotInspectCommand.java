package spice.authority.app.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;

@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        description = {
            "Show a signed SnapshotEnvelope as readable JSON: envelope fields, the digest check, the",
            "claim's shape, and a summary of the decoded payload (counts, identities; no conversation",
            "text). Accepts the binary protobuf encoding or the protobuf JSON mapping.",
            "It never says the claim is authentic: that needs the authority's key."
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
            return Cli.REFUSED;
        } catch (IOException e) {
            out.println(file + ": UNREADABLE " + BoundedFiles.describe(e));
            return Cli.REFUSED;
        }
        boolean isJson = looksLikeJson(bytes);
        Envelope env;
        try {
            env = isJson ? Envelope.parseJson(new String(bytes, StandardCharsets.UTF_8)) : Envelope.parse(bytes);
        } catch (EnvelopeRejectedException e) {
            out.println(file + ": REJECTED " + e.rule().id() + " " + e.rule().reason());
            return Cli.REFUSED;
        }
        boolean ok = true;
        JsonGenerator g = new JsonFactory().createGenerator(out);
        g.useDefaultPrettyPrinter();
        g.writeStartObject();
        g.writeStringField("file", file);
        g.writeStringField("encoding", isJson ? "protobuf JSON mapping" : "binary protobuf");

        g.writeObjectFieldStart("envelope");
        g.writeStringField("format", env.format());
        g.writeStringField("run_id", env.runId());
        g.writeStringField("last_sequence", Long.toUnsignedString(env.lastSequence()));
        g.writeStringField("lifecycle", env.lifecycleName());
        g.writeNumberField("payload_bytes", env.payloadLength());
        g.writeStringField("sha256", GoText.hex(env.sha256()));
        g.writeNumberField("encoded_bytes", env.encodedLength());
        g.writeEndObject();

        g.writeObjectFieldStart("checks");
        try {
            Envelopes.validate(env);
            g.writeStringField("structure", "ok");
        } catch (EnvelopeRejectedException e) {
            ok = false;
            g.writeStringField("structure", e.rule().id() + ": " + e.rule().reason());
        }
        boolean digestOk = MessageDigest.isEqual(HmacSha256.sha256(env.payload()), env.sha256());
        ok &= digestOk;
        g.writeStringField("digest", digestOk ? "ok: sha256 matches the payload" : "mismatch: sha256 does not match the payload");
        String claimShape = !env.hasAuthority() ? "missing"
                : env.claim().isPresent() ? "ok: 32-byte scope, generation >= 1, 32-byte HMAC" : "malformed";
        ok &= env.claim().isPresent();
        g.writeStringField("claim_shape", claimShape);
        Snapshot snapshot = null;
        try {
            snapshot = Snapshot.decode(env.payload());
            g.writeStringField("payload", "ok: valid canonical v1alpha2");
        } catch (PayloadRejectedException e) {
            ok = false;
            g.writeStringField("payload", e.getMessage());
        }
        if (snapshot != null) {
            boolean agree = snapshot.runId().equals(env.runId()) && snapshot.lastSequence() == env.lastSequence()
                    && snapshot.status().lifecycleNumber() == env.lifecycleNumber();
            ok &= agree;
            g.writeStringField("agreement", agree ? "ok: run_id, last_sequence and lifecycle match the payload"
                    : "mismatch: run_id, last_sequence or lifecycle differ from the payload");
        } else {
            g.writeStringField("agreement", "not checked: payload invalid");
        }
        g.writeEndObject();

        if (env.hasAuthority()) {
            g.writeObjectFieldStart("claim");
            g.writeStringField("scope_id", GoText.hex(env.authorityScopeId()));
            g.writeStringField("generation", Long.toUnsignedString(env.authorityGeneration()));
            g.writeStringField("hmac_sha256", env.authorityMacLength() + " bytes (not shown)");
            g.writeEndObject();
        }
        g.writeStringField("authenticity", "not verified: only the authority that holds the key can verify the claim (import through the helper)");
        if (snapshot != null) {
            writeSummary(g, snapshot);
        }
        g.writeEndObject();
        g.flush();
        out.println();
        out.flush();
        return ok ? Cli.OK : Cli.REFUSED;
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

    /** Counts and identities only; conversation text and tool data are never printed. */
    static void writeSummary(JsonGenerator g, Snapshot s) throws IOException {
        g.writeObjectFieldStart("payload");
        g.writeStringField("run_id", s.runId());
        g.writeStringField("status", s.status().wire());
        g.writeObjectFieldStart("definition");
        g.writeStringField("name", s.definition().name());
        g.writeStringField("model", s.definition().model());
        g.writeNumberField("max_turns", s.definition().maxTurns());
        g.writeEndObject();
        g.writeNumberField("completed_turns", s.completedTurns());
        g.writeStringField("last_sequence", Long.toUnsignedString(s.lastSequence()));
        g.writeNumberField("messages", s.history().size());
        Map<Role, Integer> roles = new EnumMap<>(Role.class);
        Map<String, Integer> parts = new LinkedHashMap<>();
        for (String k : new String[] {"text", "tool_call", "tool_result", "extension"}) {
            parts.put(k, 0);
        }
        for (Message m : s.history()) {
            roles.merge(m.role(), 1, Integer::sum);
            for (Part p : m.parts()) {
                parts.merge(p.kind(), 1, Integer::sum);
            }
        }
        g.writeObjectFieldStart("messages_by_role");
        for (Role r : Role.values()) {
            g.writeNumberField(r.wire(), roles.getOrDefault(r, 0));
        }
        g.writeEndObject();
        g.writeObjectFieldStart("parts_by_kind");
        for (Map.Entry<String, Integer> e : parts.entrySet()) {
            g.writeNumberField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
        g.writeObjectFieldStart("plan_identity");
        g.writeArrayFieldStart("compiled_identities");
        for (String c : s.planIdentity().compiledIdentities()) {
            g.writeString(c);
        }
        g.writeEndArray();
        g.writeStringField("snapshot_compatibility_identity", s.planIdentity().snapshotCompatibilityIdentity());
        g.writeStringField("tool_plan_id", s.planIdentity().toolPlanId());
        g.writeStringField("fingerprint", s.planIdentity().fingerprint());
        g.writeBooleanField("importable_plan", !s.planIdentity().snapshotCompatibilityIdentity().isEmpty());
        g.writeEndObject();
        g.writeNumberField("seen_interaction_ids", s.seenInteractionIds().size());
        g.writeBooleanField("resumable", !s.status().isTerminal());
        g.writeEndObject();
    }
}
