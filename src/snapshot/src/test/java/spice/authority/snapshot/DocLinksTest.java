package spice.authority.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link of the manual leads somewhere: README.md, docs/*.md, the spec kit's and the
 * benchmarks' markdown and the per-module READMEs. A link {@code [text](path#anchor)} must name a
 * file or directory inside the repository, and an anchor into a markdown file must be the
 * GitHub-style anchor of one of its headings. Links in code (fenced blocks, code spans) and
 * absolute URLs are not checked. The repository root is the parent of {@code spice.spec.dir}.
 */
class DocLinksTest {

    /** {@code [text](target)} or {@code ![alt](target "title")}; text may hold one level of brackets. */
    private static final Pattern LINK =
            Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\[\\]]*\\])*\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)(?:\\s+#+)?\\s*$");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    @Test
    void theManual_hasNoBrokenRelativeLinks() throws IOException {
        Path root = SpecFiles.specDir().getParent();
        List<Path> files = manualFiles(root);
        assertThat(files).as("the manual's files").contains(root.resolve("README.md"), root.resolve("docs/http-api.md"));
        List<String> broken = new ArrayList<>();
        for (Path file : files) {
            broken.addAll(brokenLinks(root, file));
        }
        assertThat(broken).as("broken links in %s", files.stream().map(f -> root.relativize(f).toString()).toList())
                .isEmpty();
    }

    @Test
    void checker_namesEachBrokenLink_andPassesGoodOnes(@TempDir Path root) throws IOException {
        Files.createDirectories(root.resolve("docs"));
        Files.createDirectories(root.resolve("src/app"));
        Files.writeString(root.resolve("docs/a.md"), """
                # The helper: `serve` and the HTTP API

                ## Known limits

                ## Known limits
                """);
        Files.writeString(root.resolve("README.md"), """
                # Title

                See [a](docs/a.md), [serve](docs/a.md#the-helper-serve-and-the-http-api),
                [the second limits](docs/a.md#known-limits-1), [a directory](src/app), [top](#title),
                [the web](https://example.org/nowhere.md) and [mail](mailto:x@example.org).
                A code span `[not a link](nowhere.md)` is not checked, nor is a fenced block:

                ```md
                [not a link either](nowhere.md)
                ```

                Broken: [missing](docs/missing.md) and [bad anchor](docs/a.md#no-such-heading),
                [third limits](docs/a.md#known-limits-2), [self](#nope), [outside](../outside.md).
                """);
        Files.writeString(root.resolveSibling("outside.md"), "# Outside\n");
        try {
            assertThat(brokenLinks(root, root.resolve("README.md"))).containsExactly(
                    "README.md:12: [missing](docs/missing.md): no file docs/missing.md",
                    "README.md:12: [bad anchor](docs/a.md#no-such-heading): docs/a.md has no heading with anchor #no-such-heading",
                    "README.md:13: [third limits](docs/a.md#known-limits-2): docs/a.md has no heading with anchor #known-limits-2",
                    "README.md:13: [self](#nope): README.md has no heading with anchor #nope",
                    "README.md:13: [outside](../outside.md): leads out of the repository");
            assertThat(brokenLinks(root, root.resolve("docs/a.md"))).isEmpty();
        } finally {
            Files.delete(root.resolveSibling("outside.md"));
        }
    }

    @Test
    void anchors_followGitHub() {
        assertThat(anchors(List.of("# The helper: `serve` and the HTTP API", "## Start-up, measured here",
                "### `snapshot validate FILE...`", "## Known limits", "## Known limits", "## Durable host recovery: the host store",
                "## [Linked](x.md) **bold** max_leases é")))
                .containsExactly("the-helper-serve-and-the-http-api", "start-up-measured-here", "snapshot-validate-file",
                        "known-limits", "known-limits-1", "durable-host-recovery-the-host-store", "linked-bold-max_leases-é");
    }

    /** README.md, docs/*.md, spec-kit/README.md, bench/*.md, clients/README.md and os-&#42;/README.md. */
    private static List<Path> manualFiles(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        for (String dir : List.of("docs", "bench")) {
            try (Stream<Path> s = Files.list(root.resolve(dir))) {
                s.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(files::add);
            }
        }
        for (String readme : List.of("spec-kit/README.md", "clients/README.md", "os-posix/README.md", "os-windows/README.md")) {
            if (Files.isRegularFile(root.resolve(readme))) {
                files.add(root.resolve(readme));
            }
        }
        return files;
    }

    /** One line per broken relative link of {@code file}: {@code path:line: [text](target): why}. */
    static List<String> brokenLinks(Path root, Path file) throws IOException {
        Path base = root.toAbsolutePath().normalize();
        String name = base.relativize(file.toAbsolutePath().normalize()).toString();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> prose = prose(lines);
        Map<Path, Set<String>> anchorCache = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (int i = 0; i < prose.size(); i++) {
            String line = prose.get(i);
            Matcher m = LINK.matcher(blankCodeSpans(line));
            while (m.find()) {
                String target = m.group(1);
                if (target.isEmpty() || SCHEME.matcher(target).find() || target.startsWith("//")) {
                    continue;
                }
                int hash = target.indexOf('#');
                String pathPart = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
                String anchor = hash < 0 ? null : URLDecoder.decode(target.substring(hash + 1), StandardCharsets.UTF_8);
                String where = name + ":" + (i + 1) + ": " + line.substring(m.start(), m.end()) + ": ";
                Path resolved = pathPart.isEmpty() ? file.toAbsolutePath().normalize()
                        : (pathPart.startsWith("/") ? base.resolve(pathPart.substring(1))
                                : file.toAbsolutePath().getParent().resolve(pathPart)).normalize();
                if (!resolved.startsWith(base)) {
                    broken.add(where + "leads out of the repository");
                } else if (!Files.exists(resolved)) {
                    broken.add(where + "no file " + base.relativize(resolved));
                } else if (anchor != null && resolved.toString().endsWith(".md") && Files.isRegularFile(resolved)
                        && !anchorCache.computeIfAbsent(resolved, DocLinksTest::anchorsOf).contains(anchor)) {
                    broken.add(where + base.relativize(resolved) + " has no heading with anchor #" + anchor);
                }
            }
        }
        return broken;
    }

    /** {@code line} with every code span replaced by as many spaces (offsets kept). */
    private static String blankCodeSpans(String line) {
        StringBuilder out = new StringBuilder(line);
        Matcher c = CODE_SPAN.matcher(line);
        while (c.find()) {
            for (int k = c.start(); k < c.end(); k++) {
                out.setCharAt(k, ' ');
            }
        }
        return out.toString();
    }

    /** The lines with fenced code blocks blanked (line numbers kept). */
    private static List<String> prose(List<String> lines) {
        List<String> out = new ArrayList<>(lines.size());
        String fence = null;
        for (String line : lines) {
            Matcher f = FENCE.matcher(line);
            if (fence == null && f.find()) {
                fence = f.group(1);
                out.add("");
            } else if (fence != null) {
                if (f.find() && f.group(1).charAt(0) == fence.charAt(0) && f.group(1).length() >= fence.length()
                        && line.strip().equals(f.group(1))) {
                    fence = null;
                }
                out.add("");
            } else {
                out.add(line);
            }
        }
        return out;
    }

    private static Set<String> anchorsOf(Path markdown) {
        try {
            return anchors(prose(Files.readAllLines(markdown, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * GitHub's heading anchors: the heading's text (links reduced to their text, code and emphasis
     * marks dropped) in lower case, every character but letters, marks, digits, connector punctuation,
     * spaces and hyphens removed, spaces made hyphens; a repeated anchor gets -1, -2, ….
     */
    static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : lines) {
            Matcher h = HEADING.matcher(line);
            if (!h.matches()) {
                continue;
            }
            String text = h.group(2).replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "").replace("*", "");
            String slug = text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum);
            anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
        }
        return anchors;
    }
}
