package spice.authority.os.posix;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * Reads and parses Linux {@code /proc/<pid>/stat} and {@code /proc/<pid>/status}. Pure Java.
 *
 * <p>Parsing fails closed: anything malformed reads as "no such process".
 */
final class ProcFs {

    /** Linux pids are at most 2^22 (PID_MAX_LIMIT); anything above an int is certainly invalid. */
    static boolean validPid(long pid) {
        return pid > 0 && pid <= Integer.MAX_VALUE;
    }

    private ProcFs() {}

    /** The start time of a live (not zombie, not dead) process, or empty. */
    static OptionalLong startTime(long pid) {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        String stat = read(pid, "stat");
        return stat == null ? OptionalLong.empty() : parseStartTime(stat);
    }

    /** The real uid of a process, or empty. */
    static OptionalLong realUid(long pid) {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        String status = read(pid, "status");
        return status == null ? OptionalLong.empty() : parseRealUid(status);
    }

    /** The parent pid (field 4 of {@code /proc/<pid>/stat}), or empty for no such live process. */
    static OptionalLong parentPid(long pid) {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        String stat = read(pid, "stat");
        return stat == null ? OptionalLong.empty() : parseParentPid(stat);
    }

    /** Field 4 ({@code ppid}), counted after the last {@code ')'} like {@link #parseStartTime}. */
    static OptionalLong parseParentPid(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return OptionalLong.empty();
        }
        String[] f = stat.substring(close + 1).strip().split(" ");
        if (f.length < 2) {
            return OptionalLong.empty();
        }
        return unsignedDecimal(f[4 - 3]);
    }

    /**
     * Field 22 ({@code starttime}) of a {@code /proc/<pid>/stat} line, or empty if the line is
     * malformed or the state (field 3) is zombie ({@code Z}) or dead ({@code X}, {@code x}).
     *
     * <p>SECURITY: field 2 ({@code comm}) is chosen by the process, in parentheses, and may
     * itself contain spaces and {@code ')'}; everything after the <em>last</em> {@code ')'}
     * is kernel-formatted, so fields are counted from there.
     */
    static OptionalLong parseStartTime(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0 || stat.indexOf('(') < 0 || stat.indexOf('(') > close) {
            return OptionalLong.empty();
        }
        String[] f = stat.substring(close + 1).strip().split(" ");
        // f[0] is field 3 (state), so field n is f[n - 3]
        if (f.length < 22 - 3 + 1 || f[0].length() != 1) {
            return OptionalLong.empty();
        }
        char state = f[0].charAt(0);
        if (state == 'Z' || state == 'X' || state == 'x') {
            return OptionalLong.empty();
        }
        return unsignedDecimal(f[22 - 3]);
    }

    /**
     * The real uid (first number of the {@code Uid:} line) of a {@code /proc/<pid>/status}.
     *
     * <p>SECURITY: only a line that <em>starts</em> with {@code Uid:} counts; the kernel
     * escapes newlines in the process-chosen {@code Name:} line, so it cannot forge one.
     */
    static OptionalLong parseRealUid(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("Uid:")) {
                String[] f = line.substring(4).strip().split("\\s+");
                return f.length == 4 ? unsignedDecimal(f[0]) : OptionalLong.empty();
            }
        }
        return OptionalLong.empty();
    }

    private static OptionalLong unsignedDecimal(String s) {
        if (s.isEmpty() || s.length() > 19) {
            return OptionalLong.empty();
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.of(Long.parseLong(s));
    }

    /** The file's text, or null if it cannot be read (no such process, hidepid, ...). */
    private static String read(long pid, String file) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), file)),
                    StandardCharsets.UTF_8);
        } catch (IOException | SecurityException e) {
            return null;
        }
    }
}
