package spice.authority.app.session;

/** What the session layer counts; implemented by the helper's metrics. */
public interface SessionMetrics {
    void sessionOpened();

    void sessionClosed();
}
