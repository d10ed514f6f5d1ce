package spice.authority.app.session;

/** What the session layer counts; implemented by the helper's metrics. */
public interface SessionMetrics {
    void sessionOpened();

    void sessionClosed();

    /** Counts a run transition of {@code kind} with its {@code result} ({@code ok}, {@code repeated} or a problem code). */
    void transition(String kind, String result);
}
