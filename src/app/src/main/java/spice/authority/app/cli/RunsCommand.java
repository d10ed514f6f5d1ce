package spice.authority.app.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.host.AuthorityClient;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.host.WithJson;
import spice.authority.snapshot.RunId;

@Command(name = "runs",
        mixinStandardHelpOptions = true,
        description = {
            "List, show and abandon the runs of the running helper's authority directory.",
            "Talks to the helper (default socket as 'serve'); opens no listener."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  spice-authority runs list",
            "  spice-authority runs show run-1 --json",
            "  spice-authority runs abandon run-1 --yes"
        },
        subcommands = {RunsCommand.ListRuns.class, RunsCommand.Show.class, RunsCommand.Abandon.class})
public final class RunsCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Cli.subcommandRequired(spec);
    }

    /**
     * Aligned, compact lines: {@code run-1  SUSPENDED  generation 1  owned}; a fenced run ends in
     * {@code not owned  fenced}.
     */
    static List<String> lines(List<RunView> runs) {
        int idWidth = 0;
        int phaseWidth = 0;
        int genWidth = 0;
        List<String[]> rows = new ArrayList<>();
        for (RunView r : runs) {
            String[] row = {
                HelperCommand.clean(r.runId()),
                HelperCommand.clean(r.phase()),
                r.runGenerationText(),
                (r.owned() ? "owned" : "not owned") + (r.fenced() ? "  fenced" : "")
            };
            idWidth = Math.max(idWidth, row[0].length());
            phaseWidth = Math.max(phaseWidth, row[1].length());
            genWidth = Math.max(genWidth, row[2].length());
            rows.add(row);
        }
        List<String> out = new ArrayList<>();
        for (String[] row : rows) {
            out.add(pad(row[0], idWidth) + "  " + pad(row[1], phaseWidth) + "  generation " + pad(row[2], genWidth)
                    + "  " + row[3]);
        }
        return out;
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(0, width - s.length()));
    }

    /** Base of the run commands taking a RUN_ID. */
    abstract static class OneRun extends HelperCommand {
        @Parameters(index = "0", paramLabel = "RUN_ID",
                description = "The run's ID: at most 96 UTF-8 bytes, no control characters, no leading or trailing space.")
        String runId;

        void printRun(AuthorityClient client, WithJson<RunView> run) throws Refused {
            if (json) {
                printJson(client, run.json());
                return;
            }
            PrintWriter out = spec.commandLine().getOut();
            lines(List.of(run.value())).forEach(out::println);
            out.flush();
        }

        @Override
        void preflight() throws Usage {
            if (runId.isEmpty()) {
                throw new Usage("RUN_ID is empty");
            }
            if (!RunId.isValid(runId)) {
                throw new Usage("RUN_ID is not a run ID: " + RunId.RULE);
            }
        }
    }

    @Command(name = "list",
            mixinStandardHelpOptions = true,
            description = {
                "List every run with a verified record.",
                "Shows ID, phase, run generation, and whether a live session owns it. A run",
                "marked 'fenced' had a write whose outcome is unknown: the helper acts on it",
                "for nobody until it is restarted, and then reads its state from disk. Prints",
                "'no runs' when there are none."
            },
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  listed",
                "  1  no helper is running (the line says how to start one), or the helper",
                "     refused",
                "  2  usage error",
                "",
                "Examples:",
                "  spice-authority runs list",
                "  spice-authority runs list --json",
                "  spice-authority runs list --socket /tmp/demo/endpoint/authority.sock"
            })
    public static final class ListRuns extends HelperCommand {
        @Override
        int run(AuthorityClient client) throws IOException, Refused {
            WithJson<List<RunView>> answer = client.runsWithJson();
            if (json) {
                printJson(client, answer.json());
                return ExitCodes.OK;
            }
            List<RunView> runs = answer.value();
            PrintWriter out = spec.commandLine().getOut();
            if (runs.isEmpty()) {
                out.println("no runs");
            } else {
                lines(runs).forEach(out::println);
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "show",
            mixinStandardHelpOptions = true,
            description = {
                "Show one run; no secrets.",
                "Shows ID, phase, run generation, and whether a live session owns it",
                "('fenced' when its last outcome is uncertain: cleared only by restarting",
                "the helper)."
            },
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  shown",
                "  1  no such run, no helper running, or the helper refused (one line says",
                "     which)",
                "  2  usage error",
                "",
                "Examples:",
                "  spice-authority runs show run-1",
                "  spice-authority runs show run-1 --json"
            })
    public static final class Show extends OneRun {
        @Override
        int run(AuthorityClient client) throws IOException, Refused {
            printRun(client, client.runWithJson(runId));
            return ExitCodes.OK;
        }
    }

    @Command(name = "abandon",
            mixinStandardHelpOptions = true,
            description = {
                "Tombstone an orphaned run as CANCELLED (operator action).",
                "An orphan is a run left ACTIVE, IMPORTING or SUSPENDED by a host that died,",
                "with no live session owning it and no import holding it. Writes a durable",
                "CANCELLED tombstone: the run can never be resumed or imported again (a",
                "SUSPENDED run's envelope stops verifying). A run whose owner lives, SUSPENDED",
                "or not, is refused busy. Irreversible, so it requires --yes.",
                "Opens a session for this process, asks the helper to abandon the run,",
                "closes the session, and prints the resulting run."
            },
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  abandoned (the run is CANCELLED)",
                "  1  refused: busy (a live owner), state_conflict (no record, or a",
                "     tombstone already), or no helper",
                "  2  usage error (RUN_ID breaks the run-ID rule), or --yes missing",
                "",
                "Examples:",
                "  spice-authority runs list",
                "  spice-authority runs abandon run-1 --yes"
            })
    public static final class Abandon extends OneRun {
        @Option(names = "--yes", description = "Confirm: tombstone the run as CANCELLED (irreversible).")
        boolean yes;

        @Override
        void preflight() throws Usage {
            super.preflight();
            if (!yes) {
                throw new Usage("'runs abandon' is irreversible: it tombstones run " + oneLine(runId)
                        + " as CANCELLED, after which it can never be resumed or imported; add --yes to confirm");
            }
        }

        @Override
        int run(AuthorityClient client) throws IOException, Refused {
            Session session = client.openSession();
            WithJson<RunView> run;
            try {
                run = client.abandonWithJson(session, runId);
            } finally {
                try {
                    client.closeSession(session);
                } catch (IOException e) {
                    // The helper closes the session anyway when this process exits.
                }
            }
            printRun(client, run);
            return ExitCodes.OK;
        }
    }
}
