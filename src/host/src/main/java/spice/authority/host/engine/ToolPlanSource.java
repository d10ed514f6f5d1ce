package spice.authority.host.engine;

import java.util.List;

/**
 * Where an engine leases its tool plans: the current plan for new runs, and exactly the recorded
 * plan ID on import (RFC 0007: the importer leases the recorded ToolPlanID and recomputes the
 * combined plan identity before anything mutates).
 */
public interface ToolPlanSource {
    /** The plan ID new runs lease. */
    String currentPlanId();

    /**
     * Leases the plan {@code toolPlanId}. A source may return a lease with another ID (a substituted
     * plan): the engine then releases it and refuses.
     *
     * @throws PlanUnavailableException when the source has no such plan
     */
    Lease lease(String toolPlanId) throws PlanUnavailableException;

    /** A live lease of a tool plan; {@link #release()} is idempotent. */
    interface Lease extends AutoCloseable {
        String planId();

        List<Tool> tools();

        void release();

        @Override
        default void close() {
            release();
        }
    }

    /** The source cannot lease the named plan. */
    final class PlanUnavailableException extends Exception {
        private static final long serialVersionUID = 1L;

        public PlanUnavailableException(String message) {
            super(message, null, false, false);
        }
    }
}
