package spice.authority.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import spice.authority.snapshot.payload.Definition;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Deterministic, realistic v1alpha2 payloads for {@link SnapshotBench}: an airline-support
 * conversation in English (like the tau-bench transcripts of the spec kit) with tool calls whose
 * arguments and results are small JSON objects. Same seed, same bytes, on every machine.
 */
final class SnapshotPayloads {
    private static final String[] OPENERS = {
        "Hi, I need some help with a reservation I made last month.",
        "Hello! I'd like to change the dates of my upcoming trip.",
        "Good morning, I'm trying to find out whether my flight is still on time.",
        "Hey there, can you tell me how many checked bags I am allowed?",
        "I want to cancel one of my bookings and get a refund if possible.",
        "Could you help me upgrade my seat to business class?",
    };
    private static final String[] USER = {
        "My user ID is %s and the reservation number is %s.",
        "I'd prefer a morning departure if there is one available.",
        "The trip is from %s to %s, and I'm flexible by a day or two.",
        "Please use the credit card on file; I don't want to use my gift card for this.",
        "Yes, that sounds right. Please go ahead with the change.",
        "Actually, can you check whether there is anything cheaper in economy?",
        "I'm travelling with my daughter, so we need two seats next to each other.",
        "Is there a fee for changing the flight, or is it covered by my membership?",
        "Thanks. One more thing: can I add a checked bag to the return flight as well?",
        "No, that's everything for now. I appreciate your patience.",
    };
    private static final String[] ASSISTANT = {
        "I can help with that. Before I make any changes, let me look up your reservation details.",
        "I found your reservation. It includes %d passengers travelling from %s to %s on May %d.",
        "There are %d flights that match your request; the earliest departs at %d:00 and arrives at %d:45.",
        "Changing the flight will cost an extra $%d because the new fare is higher than your current one.",
        "As a gold member, you are entitled to %d free checked bags per passenger in economy.",
        "Please confirm that you would like me to proceed with these changes (yes/no).",
        "The modification is complete, and a confirmation email has been sent to the address on your profile.",
        "Unfortunately, basic economy tickets cannot be modified, but they can be cancelled within 24 hours of booking.",
        "I have updated the payment to the credit card ending in %d; the refund will arrive within 5 to 7 business days.",
        "Is there anything else I can help you with today?",
    };
    private static final String[] CITIES = {"JFK", "SEA", "ORD", "LAX", "ATL", "DFW", "BOS", "MIA", "SFO", "DEN"};
    private static final String[] TOOLS = {
        "get_user_details", "get_reservation_details", "search_direct_flight", "update_reservation_flights",
        "update_reservation_baggages", "calculate", "cancel_reservation",
    };

    private final SplittableRandom rnd;
    private final int sentencesPerText;
    private final List<Message> messages = new ArrayList<>();
    private int estimatedBytes;
    private int calls;
    private int userTurns;

    private SnapshotPayloads(long seed, int sentencesPerText) {
        this.rnd = new SplittableRandom(seed);
        this.sentencesPerText = sentencesPerText;
    }

    /** About 15 KB: 50 messages, 10 of them assistant tool calls answered by 10 tool results. */
    static byte[] fiftyMessages() {
        return fiftyMessages("bench-50-messages");
    }

    /** {@link #fiftyMessages()} for the run {@code runId} (same conversation, same status SUSPENDED). */
    static byte[] fiftyMessages(String runId) {
        SnapshotPayloads g = new SnapshotPayloads(20240515L, 3);
        g.user(OPENERS[0]);
        for (int round = 0; round < 10; round++) {
            if (round > 0) {
                g.user(null);
            }
            g.toolRound();
            g.assistant();
        }
        for (int i = 0; i < 5; i++) { // plain exchanges without tools
            g.user(null);
            g.assistant();
        }
        if (g.messages.size() != 50 || g.calls != 10) {
            throw new IllegalStateException("generator shape: " + g.messages.size() + " messages, " + g.calls + " calls");
        }
        return g.build(runId);
    }

    /** Rounds of the same conversation, with longer turns, until the payload reaches 2 MiB. */
    static byte[] twoMebibytes() {
        SnapshotPayloads g = new SnapshotPayloads(20240516L, 20);
        g.user(OPENERS[1]);
        while (g.estimatedBytes < (2 << 20)) {
            g.toolRound();
            g.assistant();
            g.user(null);
        }
        return g.build("bench-2-mib");
    }

    private void user(String opener) {
        userTurns++;
        add(Role.USER, new Part.Text(opener != null ? opener + " " + paragraph(USER) : paragraph(USER)));
    }

    private void assistant() {
        add(Role.ASSISTANT, new Part.Text(paragraph(ASSISTANT)));
    }

    /** An assistant message with a short text and one tool call, then the tool's result. */
    private void toolRound() {
        String tool = TOOLS[rnd.nextInt(TOOLS.length)];
        String callId = "call_" + token(24);
        String args = "{\"reservation_id\":\"" + token(6).toUpperCase(java.util.Locale.ROOT) + "\",\"origin\":\""
                + city() + "\",\"destination\":\"" + city() + "\",\"date\":\"2024-05-" + (10 + rnd.nextInt(20)) + "\"}";
        calls++;
        add(Role.ASSISTANT, new Part.Text(sentence(ASSISTANT)), new Part.ToolCall(tool, callId, JsonValue.of(args)));
        add(Role.TOOL, new Part.ToolResult(tool, callId, JsonValue.of(result())));
    }

    private String result() {
        StringBuilder sb = new StringBuilder("{\"status\":\"ok\",\"flights\":[");
        int n = 1 + rnd.nextInt(Math.max(2, sentencesPerText / 2));
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append(',');
            }
            int dep = 6 + rnd.nextInt(14);
            sb.append("{\"flight_number\":\"HAT").append(100 + rnd.nextInt(900)).append("\",\"origin\":\"").append(city())
                    .append("\",\"destination\":\"").append(city()).append("\",\"scheduled_departure_time_est\":\"")
                    .append(String.format(java.util.Locale.ROOT, "%02d:00:00", dep)).append("\",\"available_seats\":{\"economy\":")
                    .append(rnd.nextInt(20)).append(",\"business\":").append(rnd.nextInt(8)).append("},\"prices\":{\"economy\":")
                    .append(80 + rnd.nextInt(400)).append(",\"business\":").append(400 + rnd.nextInt(1500)).append("}}");
        }
        return sb.append("]}").toString();
    }

    private void add(Role role, Part... parts) {
        String id = String.format(java.util.Locale.ROOT, "m-%04d", messages.size() + 1);
        messages.add(new Message(id, role, List.of(parts)));
        int bytes = 40 + id.length();
        for (Part p : parts) {
            bytes += 20 + switch (p) {
                case Part.Text t -> t.text().getBytes(StandardCharsets.UTF_8).length;
                case Part.ToolCall c -> 30 + c.name().length() + c.callId().length() + c.data().rawLength();
                case Part.ToolResult r -> 30 + r.name().length() + r.callId().length() + r.data().rawLength();
                case Part.Extension e -> e.namespace().length() + e.data().rawLength();
            };
        }
        estimatedBytes += bytes;
    }

    private String paragraph(String[] bank) {
        int n = 1 + rnd.nextInt(sentencesPerText);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append(' ');
            }
            sb.append(sentence(bank));
        }
        return sb.toString();
    }

    /** A sentence of the bank with {@code %s} filled by an ID (where the sentence asks for one) or an airport, {@code %d} by a number. */
    private String sentence(String[] bank) {
        String s = bank[rnd.nextInt(bank.length)];
        boolean ids = s.contains("ID");
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 1 < s.length() && s.charAt(i + 1) == 's') {
                sb.append(ids ? token(6).toUpperCase(java.util.Locale.ROOT) : city());
                i++;
            } else if (c == '%' && i + 1 < s.length() && s.charAt(i + 1) == 'd') {
                sb.append(1 + rnd.nextInt(23));
                i++;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private String city() {
        return CITIES[rnd.nextInt(CITIES.length)];
    }

    private String token(int len) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    private byte[] build(String runId) {
        List<String> compiled = List.of("broker:injected", "provider:openai-gpt-4o", "stage:kernel",
                "tool:airline-tools");
        String fingerprint;
        try {
            fingerprint = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(String.join("\n", compiled).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        List<String> interactions = new ArrayList<>();
        for (int i = 1; i <= Math.min(calls, 64); i++) {
            interactions.add(String.format(java.util.Locale.ROOT, "ia-%04d", i));
        }
        Snapshot.Builder b = Snapshot.builder()
                .runId(runId)
                .definition(new Definition("airline-support", "gpt-4o", 1000))
                .completedTurns(Math.min(userTurns, 999))
                .planIdentity(new PlanIdentity(compiled, "airline-support:v2", "tool-plan-7", fingerprint))
                .seenInteractionIds(interactions)
                .lastSequence(3L * messages.size() + 1)
                .status(LifecycleStatus.SUSPENDED);
        messages.forEach(b::addMessage);
        try {
            return b.build().canonicalBytes();
        } catch (PayloadRejectedException e) {
            throw new IllegalStateException("generated payload rejected: " + e.getMessage(), e);
        }
    }
}
