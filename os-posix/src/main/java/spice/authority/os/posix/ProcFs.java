package spice.authority.os.posix;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import spice.authority.os.ProcessWatchException;

/**
 * Reads and parses Linux {@code /proc/<pid>/stat} and {@code /proc/<pid>/status}.
 *
 * <p><b>Guarantees.</b> Unknown is not dead. A read answers "no such process" (empty) only on a
 * proof: {@code ENOENT} when opening (the pid has no process) or {@code ESRCH} when reading (it
 * exited meanwhile), or a stat line whose state is zombie or dead. Every other failure (EMFILE,
 * ENFILE, ENOMEM, EACCES, an unreadable or malformed {@code /proc}) throws
 * {@link ProcessWatchException}: the caller learns nothing and must neither release nor admit
 * anything on it. Files are read through the {@link Libc} door, so the errno is the kernel's.
 */
final class ProcFs {

    /** Linux pids are at most 2^22 (PID_MAX_LIMIT); anything above an int is certainly invalid. */
    static boolean validPid(long pid) {
        return pid > 0 && pid <= Integer.MAX_VALUE;
    }

    /** {@link #parseStartTime}: the process has exited (zombie or dead state). */
    static final long EXITED = -1;
    /** {@link #parseStartTime} and friends: the text is not what the kernel writes. */
    static final long MALFORMED = -2;

    /** Large enough for any stat line (comm is at most 64 bytes) and any status file. */
    private static final int MAX_FILE = 16 * 1024;

    private ProcFs() {}

    /**
     * The start time of a live (not zombie, not dead) process, or empty when proven absent.
     *
     * @throws ProcessWatchException when it cannot be established
     */
    static OptionalLong startTime(long pid) throws ProcessWatchException {
        return field(pid, "stat", ProcFs::parseStartTime);
    }

    /**
     * The real uid of a process, or empty when there is no such process.
     *
     * @throws ProcessWatchException when it cannot be established
     */
    static OptionalLong realUid(long pid) throws ProcessWatchException {
        return field(pid, "status", ProcFs::parseRealUid);
    }

    /**
     * The parent pid (field 4 of {@code /proc/<pid>/stat}), or empty for no such live process.
     *
     * @throws ProcessWatchException when it cannot be established
     */
    static OptionalLong parentPid(long pid) throws ProcessWatchException {
        return field(pid, "stat", ProcFs::parseParentPid);
    }

    /**
     * One number parsed from {@code /proc/<pid>/<file>}: empty when the process is proven absent
     * (no such pid, or {@link #EXITED}); {@link #MALFORMED} text is unknown, not absent.
     */
    private static OptionalLong field(long pid, String file, java.util.function.ToLongFunction<String> parse)
            throws ProcessWatchException {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        String text = read(pid, file);
        if (text == null) {
            return OptionalLong.empty();
        }
        long v = parse.applyAsLong(text);
        if (v == MALFORMED) {
            throw new ProcessWatchException("/proc/" + pid + "/" + file + " is malformed");
        }
        return v == EXITED ? OptionalLong.empty() : OptionalLong.of(v);
    }

    /** Field 4 ({@code ppid}), counted after the last {@code ')'} like {@link #parseStartTime}; or {@link #MALFORMED}. */
    static long parseParentPid(String stat) {
        String[] f = kernelFields(stat);
        if (f == null || f.length < 2) {
            return MALFORMED;
        }
        return unsignedDecimal(f[4 - 3]);
    }

    /**
     * Field 22 ({@code starttime}) of a {@code /proc/<pid>/stat} line; {@link #EXITED} when the
     * state (field 3) is zombie ({@code Z}) or dead ({@code X}, {@code x}); {@link #MALFORMED}
     * for anything else the kernel does not write.
     *
     * <p>SECURITY: field 2 ({@code comm}) is chosen by the process, in parentheses, and may
     * itself contain spaces and {@code ')'}; everything after the <em>last</em> {@code ')'}
     * is kernel-formatted, so fields are counted from there.
     */
    static long parseStartTime(String stat) {
        String[] f = kernelFields(stat);
        // f[0] is field 3 (state), so field n is f[n - 3]
        if (f == null || f.length < 22 - 3 + 1 || f[0].length() != 1) {
            return MALFORMED;
        }
        char state = f[0].charAt(0);
        if (state == 'Z' || state == 'X' || state == 'x') {
            return EXITED;
        }
        return unsignedDecimal(f[22 - 3]);
    }

    /**
     * The start time of whatever process holds {@code pid} now, whatever its state (a zombie
     * thread-group leader whose other threads still run included). For a caller that already
     * knows the process is alive from its pidfd and only needs its identity.
     *
     * @throws ProcessWatchException when it cannot be read (gone meanwhile, hidden, no descriptor)
     */
    static long startTimeInAnyState(long pid) throws ProcessWatchException {
        String stat = validPid(pid) ? read(pid, "stat") : null;
        if (stat == null) {
            throw new ProcessWatchException("/proc/" + pid + "/stat cannot be read");
        }
        String[] f = kernelFields(stat);
        long start = f == null || f.length < 22 - 3 + 1 ? MALFORMED : unsignedDecimal(f[22 - 3]);
        if (start == MALFORMED) {
            throw new ProcessWatchException("/proc/" + pid + "/stat is malformed");
        }
        return start;
    }

    /** The space-separated fields after the last {@code ')'} (field 3 first), or null. */
    private static String[] kernelFields(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0 || stat.indexOf('(') < 0 || stat.indexOf('(') > close) {
            return null;
        }
        return stat.substring(close + 1).strip().split(" ");
    }

    /**
     * The real uid (first number of the {@code Uid:} line) of a {@code /proc/<pid>/status}, or
     * {@link #MALFORMED}.
     *
     * <p>SECURITY: only a line that <em>starts</em> with {@code Uid:} counts; the kernel
     * escapes newlines in the process-chosen {@code Name:} line, so it cannot forge one.
     */
    static long parseRealUid(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("Uid:")) {
                String[] f = line.substring(4).strip().split("\\s+");
                return f.length == 4 ? unsignedDecimal(f[0]) : MALFORMED;
            }
        }
        return MALFORMED;
    }

    private static long unsignedDecimal(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return MALFORMED;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return MALFORMED;
            }
        }
        return Long.parseLong(s);
    }

    /**
     * Whether {@code /proc} shows this very process, so that a missing {@code /proc/<pid>} proves
     * that pid has no process (rather than that {@code /proc} is not mounted). Needs no descriptor.
     */
    private static boolean procMounted() {
        try {
            Libc.fstatat(Libc.P.AT_FDCWD, "/proc/" + ProcessHandle.current().pid() + "/stat", 0);
            return true;
        } catch (PosixException e) {
            return false;
        }
    }

    /**
     * The file's text, or null when the process is proven absent (ENOENT at open, ESRCH at read).
     *
     * @throws ProcessWatchException on any other failure: the answer is unknown
     */
    private static String read(long pid, String file) throws ProcessWatchException {
        PosixPlatform p = Libc.P;
        String path = "/proc/" + pid + "/" + file;
        int fd;
        try {
            fd = Libc.openat(p.AT_FDCWD, path, p.O_RDONLY | p.O_CLOEXEC | p.O_NOFOLLOW, 0);
        } catch (PosixException e) {
            if ((e.errno() == p.ENOENT && procMounted()) || e.errno() == p.ESRCH) {
                return null;
            }
            throw new ProcessWatchException("cannot read " + path + ": " + e.getMessage());
        }
        try {
            byte[] buf = new byte[MAX_FILE];
            int total = 0;
            while (total < buf.length) {
                int n = Libc.read(fd, buf, total, buf.length - total);
                if (n == 0) {
                    return new String(buf, 0, total, StandardCharsets.UTF_8);
                }
                total += n;
            }
            throw new ProcessWatchException(path + " is larger than " + MAX_FILE + " bytes");
        } catch (PosixException e) {
            if (e.errno() == p.ESRCH) {
                return null;
            }
            throw new ProcessWatchException("cannot read " + path + ": " + e.getMessage());
        } finally {
            try {
                Libc.close(fd);
            } catch (PosixException e) {
                // the descriptor is gone either way (close never needs retrying on Linux)
            }
        }
    }
}
