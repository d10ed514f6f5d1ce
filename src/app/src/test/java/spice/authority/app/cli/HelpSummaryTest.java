package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every command summary that {@code --help} shows is a whole sentence: the command list of each
 * command's usage shows each subcommand's summary (the first line of its description), uncut and
 * ending with a period.
 */
class HelpSummaryTest {
    private static final Pattern ENTRY = Pattern.compile("^ {2}(\\S+)(?: {2,}(.*))?$");
    private static final Pattern CONTINUATION = Pattern.compile("^ {4,}(\\S.*)$");

    @Test
    void help_everyCommandListSummary_isAWholeSentence() {
        List<String> wrong = new ArrayList<>();
        List<String> listed = new ArrayList<>();
        for (CommandLine c : allCommands(Cli.commandLine())) {
            if (c.getSubcommands().isEmpty()) {
                continue;
            }
            String name = c.getCommandSpec().qualifiedName();
            Map<String, String> shown = commandList(c.getUsageMessage(CommandLine.Help.Ansi.OFF));
            assertThat(shown.keySet()).as("the command list of '%s --help'", name)
                    .containsExactlyInAnyOrderElementsOf(c.getSubcommands().keySet());
            for (Map.Entry<String, String> e : shown.entrySet()) {
                String summary = e.getValue();
                String full = c.getSubcommands().get(e.getKey()).getCommandSpec().usageMessage().description()[0];
                listed.add(name + " " + e.getKey());
                if (!isSentence(summary) || !summary.equals(full.strip())) {
                    wrong.add("'" + name + " --help' lists " + e.getKey() + ": \"" + summary + "\"");
                }
            }
        }
        assertThat(listed).as("commands listed").contains("spice-authority serve", "spice-authority status",
                "spice-authority install", "spice-authority uninstall", "spice-authority runs abandon",
                "spice-authority snapshot inspect", "spice-authority authority check");
        assertThat(wrong).as("summaries that are not a whole sentence").isEmpty();
    }

    /** A command that only groups others, given none, is a usage error (2): reason and usage on standard error. */
    @Test
    void groupWithoutACommand_isAUsageError() {
        for (String[] args : List.of(new String[0], new String[] {"runs"}, new String[] {"authority"}, new String[] {"snapshot"})) {
            java.io.StringWriter out = new java.io.StringWriter();
            java.io.StringWriter err = new java.io.StringWriter();
            CommandLine cl = Cli.commandLine();
            cl.setOut(new java.io.PrintWriter(out, true));
            cl.setErr(new java.io.PrintWriter(err, true));

            int code = cl.execute(args);

            String shown = String.join(" ", args);
            assertThat(code).as(shown).isEqualTo(2);
            assertThat(out.toString()).as(shown).isEmpty();
            assertThat(err.toString()).as(shown).contains("needs a command: ").contains("Usage: ");
        }
    }

    @Test
    void help_everyCommandsOwnDescription_opensWithAWholeSentence_andNoLineIsWrapped() {
        List<String> wrong = new ArrayList<>();
        for (CommandLine c : allCommands(Cli.commandLine())) {
            String[] description = c.getCommandSpec().usageMessage().description();
            List<String> rendered = List.of(c.getUsageMessage(CommandLine.Help.Ansi.OFF).split("\n"));
            String name = c.getCommandSpec().qualifiedName();
            if (description.length == 0 || !isSentence(description[0].strip())) {
                wrong.add(name + " opens with: " + (description.length == 0 ? "(none)" : description[0]));
            }
            // Each line of the description is rendered as written: none is longer than the usage
            // width, so none is broken in two.
            for (String line : description) {
                String shown = String.format(line);
                if (!rendered.contains(shown)) {
                    wrong.add(name + " wraps: " + shown);
                }
            }
        }
        assertThat(wrong).as("descriptions that do not open with a whole sentence, or whose lines wrap").isEmpty();
    }

    @Test
    void commandList_ofAWrappedSummary_isJoined() {
        String usage = """
                Usage: x [COMMAND]

                Commands:
                  one    The first line of a summary that picocli wrapped onto
                           a second line.
                  two    Short.

                Exit codes:
                  0  ok
                """;
        assertThat(commandList(usage)).containsExactly(
                Map.entry("one", "The first line of a summary that picocli wrapped onto a second line."),
                Map.entry("two", "Short."));
    }

    /** A sentence: starts with a capital letter or a quoted name, ends with a period, and has text. */
    private static boolean isSentence(String s) {
        return s.length() > 2 && s.endsWith(".") && !s.endsWith("..") && (Character.isUpperCase(s.charAt(0)) || s.charAt(0) == '\'');
    }

    private static List<CommandLine> allCommands(CommandLine root) {
        List<CommandLine> all = new ArrayList<>();
        all.add(root);
        for (CommandLine sub : root.getSubcommands().values()) {
            all.addAll(allCommands(sub));
        }
        return all;
    }

    /** The rendered "Commands:" section: each name with its summary, wrapped lines joined. */
    static Map<String, String> commandList(String usage) {
        Map<String, String> entries = new LinkedHashMap<>();
        String current = null;
        boolean inList = false;
        for (String line : usage.split("\n", -1)) {
            if (line.equals("Commands:")) {
                inList = true;
                continue;
            }
            if (!inList) {
                continue;
            }
            if (line.isBlank()) {
                break;
            }
            Matcher cont = CONTINUATION.matcher(line);
            Matcher entry = ENTRY.matcher(line);
            if (cont.matches() && current != null) {
                entries.merge(current, cont.group(1).strip(), (a, b) -> a.isEmpty() ? b : a + " " + b);
            } else if (entry.matches()) {
                current = entry.group(1);
                entries.put(current, entry.group(2) == null ? "" : entry.group(2).strip());
            } else {
                break;
            }
        }
        return entries;
    }
}
