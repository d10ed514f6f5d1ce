package spice.authority.app.session;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;

/**
 * What one host may hold, and the descriptors the helper keeps for itself. Each lease and import
 * holds a lock descriptor, each session a pidfd and each connection a socket; a host that could
 * take them all would starve every other host and the helper's own work (records, {@code /proc},
 * a new connection's checks). Quotas refuse with {@code busy} and name the setting.
 *
 * <p><b>Guarantees.</b> Per session: at most {@code max-leases-per-session} leases and
 * {@code max-imports-per-session} imports (an import becomes a lease, so it counts against both).
 * Per host process: at most {@code max-sessions-per-process} sessions and, on the Unix socket,
 * {@code max-connections-per-process} connections. Helper-wide: a new session, lease or import is
 * refused while fewer than {@code fd-reserve} descriptors are free below the descriptor limit, or
 * while the number in use or the limit cannot be read (unknown is treated as exhausted). The limit
 * is read again at least every {@value #LIMIT_REUSE_MILLIS} ms, so a limit lowered while the
 * helper runs ({@code prlimit}, {@code setrlimit}) lowers the point of refusal with it.
 */
@ApplicationScoped
public class Quotas {
    private static final Logger LOG = Logger.getLogger(Quotas.class);

    @Inject
    HelperConfig config;

    /** How long one read of the descriptor limit is reused (at most). */
    static final long LIMIT_REUSE_MILLIS = 500;

    private final Map<Long, AtomicInteger> connections = new ConcurrentHashMap<>();
    /** Whether this platform has a descriptor limit to read: decided once, by the first read. */
    private final boolean limitReadable;
    /** The last read of the limit and when it was made; reused for {@link #LIMIT_REUSE_MILLIS}. */
    private volatile LimitRead lastLimit;

    private record LimitRead(long limit, long readAtNanos) {}

    public Quotas() {
        long first = readDescriptorLimit();
        limitReadable = first > 0;
        if (!limitReadable) {
            LOG.warn("descriptor limit unknown: the descriptor reserve is not enforced");
        }
        lastLimit = new LimitRead(first, System.nanoTime());
    }

    /**
     * Refuses unless {@code fd-reserve} descriptors remain free for the helper's own work.
     *
     * @param what what would be taken, for the message ("a run lease")
     */
    public void requireDescriptorReserve(String what) {
        if (!limitReadable) {
            return; // no descriptor table to read on this platform: the per-host quotas still hold
        }
        int reserve = config.fdReserve();
        // SECURITY: the limit as it is now (read again at least every LIMIT_REUSE_MILLIS): a limit
        // lowered after start-up must lower the point of refusal, not leave the reserve measured
        // against a limit the process no longer has. A limit that cannot be read any more (no
        // descriptor left to read it with) is unknown, treated as exhausted.
        long limit = descriptorLimit();
        // RACE: counted, then taken: concurrent admissions may each see the same count and eat
        // into the reserve by as many descriptors as there are racing calls (at most the worker
        // pool). The reserve bounds that; it is a budget, not a fencing check: a descriptor
        // shortfall makes a liveness check unknown, never a death.
        long open = openDescriptors();
        if (limit <= 0 || open < 0 || open + reserve > limit) {
            LOG.warnf("refused %s: descriptor reserve reached (%s of %s in use, reserve %d)", what,
                    open < 0 ? "unknown" : Long.toString(open), limit <= 0 ? "unknown" : Long.toString(limit), reserve);
            String state = limit <= 0 ? "its descriptor limit cannot be read"
                    : open < 0 ? "its descriptors in use cannot be counted"
                    : open + " of its " + limit + " descriptors are in use";
            throw new SessionException.Busy("the helper cannot take " + what + ": " + state
                    + " and it keeps " + reserve + " for its own work", "spice.authority.fd-reserve", reserve);
        }
    }

    /**
     * Counts a new Unix-socket connection of {@code pid}; returns false (and counts nothing)
     * when the process already has its quota of connections.
     *
     * @return true when admitted: call {@link #connectionClosed} when it closes
     */
    public boolean connectionOpened(long pid) {
        boolean[] admitted = {false};
        // Check and count in one step of the map (a concurrent close cannot orphan the counter).
        connections.compute(pid, (k, n) -> {
            AtomicInteger c = n == null ? new AtomicInteger() : n;
            if (c.get() < config.maxConnectionsPerProcess()) {
                c.incrementAndGet();
                admitted[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        return admitted[0];
    }

    public void connectionClosed(long pid) {
        connections.computeIfPresent(pid, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /** Open connections of {@code pid} counted here. */
    public int connectionsOf(long pid) {
        AtomicInteger n = connections.get(pid);
        return n == null ? 0 : n.get();
    }

    public int maxConnectionsPerProcess() {
        return config.maxConnectionsPerProcess();
    }

    /**
     * The process's descriptor limit (the soft RLIMIT_NOFILE) as read at most
     * {@value #LIMIT_REUSE_MILLIS} ms ago, or 0 when it cannot be read.
     */
    public long descriptorLimit() {
        LimitRead last = lastLimit;
        long now = System.nanoTime();
        if (now - last.readAtNanos() < LIMIT_REUSE_MILLIS * 1_000_000L && last.limit() > 0) {
            return last.limit();
        }
        // RACE: two admissions may both read; either read is the limit of that moment.
        LimitRead fresh = new LimitRead(readDescriptorLimit(), now);
        lastLimit = fresh;
        return Math.max(0, fresh.limit());
    }

    /**
     * Descriptors this process has open, or -1 when they cannot be counted (none left, no /proc).
     * Linux 6.2 and later give the count as the size of {@code /proc/self/fd} (one {@code stat},
     * no descriptor taken); older kernels say 0 there, and the entries are counted instead (a
     * listing of every descriptor, which cost each admission a few hundred microseconds of kernel
     * time at ~150 descriptors). The listing's own descriptor is in its count, not in the stat's.
     */
    /**
     * SECURITY: only Linux's own {@code /proc} on 6.2 or later reports the descriptor count as the
     * directory's size; elsewhere (older kernels, gVisor, WSL1) a positive size need not be a count,
     * and trusting it could silently disable the reserve, so the entries are counted.
     */
    static final boolean SIZE_IS_COUNT = sizeIsCount(System.getProperty("os.name", ""), System.getProperty("os.version", ""));

    static boolean sizeIsCount(String osName, String osVersion) {
        if (!osName.equals("Linux")) {
            return false;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+)\\.(\\d+)").matcher(osVersion);
        if (!m.find()) {
            return false;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        return major > 6 || (major == 6 && minor >= 2);
    }

    public static long openDescriptors() {
        Path dir = Path.of("/proc/self/fd");
        if (SIZE_IS_COUNT) {
            try {
                long size = Files.readAttributes(dir, java.nio.file.attribute.BasicFileAttributes.class).size();
                if (size > 0) {
                    return size;
                }
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            long n = 0;
            for (Path ignored : entries) {
                n++;
            }
            return n;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The soft RLIMIT_NOFILE from {@code /proc/self/limits}, or 0 when it cannot be read. */
    private static long readDescriptorLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return f[0].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(f[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}
