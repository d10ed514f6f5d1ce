package spice.authority.os.posix;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * A blocking lock that really waits: Linux lists each blocked {@code flock} request in
 * {@code /proc/locks} as {@code "N: -> FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"}.
 */
final class FlockWaiters {
    private FlockWaiters() {
    }

    /** Returns once a thread of this process waits in {@code flock} on {@code file}; fails after 10 s. */
    static void await(Path file) throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/locks")), "needs /proc/locks (Linux) to see a blocked flock");
        long inode = ((Number) Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS)).longValue();
        Pattern waiter = Pattern.compile("\\d+: -> FLOCK\\s+\\S+\\s+\\S+\\s+" + ProcessHandle.current().pid()
                + "\\s+\\p{XDigit}+:\\p{XDigit}+:" + inode + "\\s.*");
        boolean waits = Poll.until(Duration.ofSeconds(10), Duration.ofMillis(5),
                () -> Files.readAllLines(Path.of("/proc/locks")).stream().anyMatch(l -> waiter.matcher(l).matches()),
                Boolean::booleanValue);
        if (!waits) {
            throw new AssertionError("no thread of this process waits in flock on " + file + " after 10 s");
        }
    }
}
