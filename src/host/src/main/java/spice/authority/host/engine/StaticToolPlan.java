package spice.authority.host.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.snapshot.plan.PlanIdentities;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * A fixed set of tools as a {@link ToolPlanSource}: its plan ID is either named by the application
 * (e.g. {@code generation-7}) or the built-in static ID ({@code static:} + SHA-256 over the sorted
 * definitions, wire-format.md b.4), which changes whenever a definition does.
 *
 * <p>Guarantees: leases only its own ID; counts live leases ({@link #liveLeases()}).
 */
public final class StaticToolPlan implements ToolPlanSource {
    private final String planId;
    private final List<Tool> tools;
    private final AtomicInteger live = new AtomicInteger();

    private StaticToolPlan(String planId, List<Tool> tools) {
        this.planId = planId;
        this.tools = List.copyOf(tools);
    }

    /** The tools under the built-in static plan ID derived from their definitions. */
    public static StaticToolPlan of(List<Tool> tools) {
        return new StaticToolPlan(PlanIdentities.staticToolPlanId(definitions(tools)), tools);
    }

    /** The tools under an application-chosen plan ID (the caller keeps it stable per contract). */
    public static StaticToolPlan named(String planId, List<Tool> tools) {
        definitions(tools); // names unique
        return new StaticToolPlan(planId, tools);
    }

    /**
     * The tools' definitions, each held to the tool layer's text rules (any {@link Tool}, not only
     * one of {@link Tool#of}).
     *
     * @throws IllegalArgumentException a definition that breaks them, or a name used twice
     */
    static List<ToolDefinition> definitions(List<Tool> tools) {
        List<ToolDefinition> out = new ArrayList<>();
        for (Tool t : tools) {
            out.add(ToolText.requireDefinition(t.definition()));
        }
        PlanIdentities.staticToolPlanId(out); // refuses duplicate names
        return out;
    }

    @Override
    public String currentPlanId() {
        return planId;
    }

    @Override
    public Lease lease(String toolPlanId) throws PlanUnavailableException {
        if (!planId.equals(toolPlanId)) {
            throw new PlanUnavailableException("no tool plan " + toolPlanId);
        }
        live.incrementAndGet();
        return new Lease() {
            private boolean released;

            @Override
            public String planId() {
                return planId;
            }

            @Override
            public List<Tool> tools() {
                return tools;
            }

            @Override
            public synchronized void release() {
                if (!released) {
                    released = true;
                    live.decrementAndGet();
                }
            }
        };
    }

    /** Leases taken and not yet released. */
    public int liveLeases() {
        return live.get();
    }
}
