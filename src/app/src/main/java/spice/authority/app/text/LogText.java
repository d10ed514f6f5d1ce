package spice.authority.app.text;

import spice.authority.snapshot.json.SafeText;

/**
 * Caller-supplied text (run IDs, pids declared in bodies) as it may appear in a log line: the
 * escaping of {@link SafeText#of} (the snapshot module's, so that its own messages, such as an
 * envelope's toString, escape the same way), under the name the app's log lines use. The result is
 * printable ASCII, so two run IDs never log alike, whatever the locale's encoding.
 */
public final class LogText {
    private LogText() {}

    public static String of(String s) {
        return SafeText.of(s);
    }
}
