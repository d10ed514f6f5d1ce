package spice.authority.app.install;

import java.util.List;

/**
 * Runs an external command (systemctl, launchctl, schtasks). Tests substitute a recorder so that
 * nothing reaches the real user's service manager.
 */
@FunctionalInterface
public interface CommandRunner {

    /** Exit code and standard output (trimmed) of one command. */
    record Result(int exitCode, String out) {}

    Result run(List<String> argv);

    /** The real runner: standard error is discarded, 60 s per command, exit 127 if absent. */
    static CommandRunner system() {
        return new SystemCommandRunner(SystemCommandRunner.DEFAULT_TIMEOUT);
    }
}
