package spice.authority.host.engine;

/** Told of each event once it is committed to the run's log, on the thread that committed it. */
@FunctionalInterface
public interface EventListener {
    void committed(Event event);
}
