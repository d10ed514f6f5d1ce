package spice.authority.bench;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the time went in a window of a flight recording of the helper: CPU samples
 * ({@code jdk.ExecutionSample}, and {@code jdk.CPUTimeSample} where recorded) between two
 * wall-clock instants, by self method (top frame) and by inclusive frame (a method anywhere on the
 * stack, counted once per sample), plus the threads that ran and the GC and JIT activity in the window.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar spice.authority.bench.ProfileWindows REC.jfr FROM_EPOCH_MS TO_EPOCH_MS [TOP [Type.method]]
 * </pre>
 * (SuspendSideBySide prints the windows of its cold and warm signs.)
 */
public final class ProfileWindows {
    private ProfileWindows() {}

    public static void main(String[] args) throws Exception {
        Instant from = Instant.ofEpochMilli(Long.parseLong(args[1]));
        Instant to = Instant.ofEpochMilli(Long.parseLong(args[2]));
        int top = args.length > 3 ? Integer.parseInt(args[3]) : 40;
        // Optional: a method (Type.method) whose samples are also broken down by the callee below it.
        String under = args.length > 4 ? args[4] : null;
        Map<String, Map<String, Integer>> callees = new HashMap<>();
        Map<String, Map<String, Integer>> self = new HashMap<>();
        Map<String, Map<String, Integer>> incl = new HashMap<>();
        Map<String, Map<String, Integer>> threads = new HashMap<>();
        Map<String, Integer> samples = new HashMap<>();
        long gcNanos = 0;
        int gcs = 0;
        long jitNanos = 0;
        int compiles = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(args[0]))) {
            if (e.getStartTime().isBefore(from) || e.getStartTime().isAfter(to)) {
                continue;
            }
            String type = e.getEventType().getName();
            switch (type) {
                case "jdk.GarbageCollection" -> {
                    gcs++;
                    gcNanos += e.getDuration().toNanos();
                }
                case "jdk.Compilation" -> {
                    compiles++;
                    jitNanos += e.getDuration().toNanos();
                }
                case "jdk.ExecutionSample", "jdk.CPUTimeSample", "jdk.NativeMethodSample" -> {
                    RecordedStackTrace st = e.getStackTrace();
                    if (st == null || st.getFrames().isEmpty()) {
                        continue;
                    }
                    samples.merge(type, 1, Integer::sum);
                    String thread = e.hasField("sampledThread") && e.getThread("sampledThread") != null
                            ? e.getThread("sampledThread").getJavaName() : "?";
                    threads.computeIfAbsent(type, k -> new HashMap<>()).merge(thread == null ? "?" : thread.replaceAll("[0-9]+", "N"), 1, Integer::sum);
                    List<RecordedFrame> frames = st.getFrames();
                    self.computeIfAbsent(type, k -> new HashMap<>()).merge(name(frames.get(0)), 1, Integer::sum);
                    if (under != null) {
                        for (int k = 1; k < frames.size(); k++) {
                            if (name(frames.get(k)).replace(" [i]", "").equals(under)) {
                                callees.computeIfAbsent(type, x -> new HashMap<>()).merge(name(frames.get(k - 1)), 1, Integer::sum);
                                break;
                            }
                        }
                    }
                    var seen = new java.util.HashSet<String>();
                    for (RecordedFrame f : frames) {
                        String n = name(f);
                        if (seen.add(n)) {
                            incl.computeIfAbsent(type, k -> new HashMap<>()).merge(n, 1, Integer::sum);
                        }
                    }
                }
                default -> { }
            }
        }
        System.out.printf(Locale.ROOT, "window %s .. %s: %d GCs (%.1f ms), %d JIT compilations (%.1f ms of compiler threads)%n",
                from, to, gcs, gcNanos / 1e6, compiles, jitNanos / 1e6);
        for (String type : samples.keySet()) {
            int n = samples.get(type);
            System.out.printf(Locale.ROOT, "%n== %s: %d samples%n-- threads%n", type, n);
            print(threads.get(type), n, 10);
            System.out.println("-- self (top frame)");
            print(self.get(type), n, top);
            System.out.println("-- inclusive");
            print(incl.get(type), n, top * 2);
            if (under != null && callees.containsKey(type)) {
                System.out.println("-- callees of " + under);
                print(callees.get(type), n, top);
            }
        }
    }

    private static String name(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName() + (f.getType().equals("Interpreted") ? " [i]" : "");
    }

    private static void print(Map<String, Integer> counts, int total, int top) {
        List<Map.Entry<String, Integer>> l = new ArrayList<>(counts.entrySet());
        l.sort(Map.Entry.<String, Integer>comparingByValue().reversed());
        for (int i = 0; i < Math.min(top, l.size()); i++) {
            System.out.printf(Locale.ROOT, "%6.1f%% %5d  %s%n", 100.0 * l.get(i).getValue() / total, l.get(i).getValue(), l.get(i).getKey());
        }
    }
}
