package spice.authority.host.engine;

/**
 * Told of each event once it is committed to the run's log, on the thread that committed it and
 * while it holds the run's turn lock: a listener must return promptly and must not wait for
 * another thread that uses the same run. An exception it throws is ignored (it never interrupts the
 * run half-way).
 */
@FunctionalInterface
public interface EventListener {
    void committed(Event event);
}
