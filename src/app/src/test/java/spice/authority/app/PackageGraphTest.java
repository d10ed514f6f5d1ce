package spice.authority.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages of the application point one way (ARCHITECTURE.md, "Inside app, packages point one
 * way"). Reads the compiled classes of {@code spice.authority.app}, not their sources: every class
 * a class file names counts (constant pool, descriptors, generic signatures and annotation values,
 * such as picocli's {@code subcommands}), nested and synthetic classes included.
 */
class PackageGraphTest {
    private static final String ROOT = "spice.authority.app";
    /** A class of ours named inside a descriptor, a signature or an annotation value. */
    private static final Pattern IN_DESCRIPTOR = Pattern.compile("L(spice/authority/app(?:/[A-Za-z0-9_$]+)+)[;<]");

    /**
     * From the top down: a package may depend only on packages listed after it. The last four
     * depend on no other package of ours.
     */
    private static final List<String> LAYERS = List.of(
            ROOT,                 // the Quarkus runner's entry point
            ROOT + ".cli",        // the command tree; serve and install are its subcommands
            ROOT + ".install",    // install --user / uninstall
            ROOT + ".demo",       // demo: host processes of the scripted agent against a helper
            ROOT + ".serve",      // serve: prepares the context, boots Quarkus, drains
            ROOT + ".api",        // HTTP: resources, transport guard, problem mapper, metrics, health
            ROOT + ".session",    // host sessions, leases, quotas (no HTTP)
            ROOT + ".runtime",    // what serve prepared, as beans; settings; the request gate
            ROOT + ".view",       // views shared by the CLI and the API
            ROOT + ".command",    // exit codes and endpoint conventions of every command
            ROOT + ".text");      // log text of caller-supplied strings

    @Test
    void appPackages_haveNoCycle() throws IOException {
        Map<String, Map<String, String>> graph = packageGraph(classesDirectory());
        assertThat(graph).as("the application's classes were found").containsKey(ROOT + ".api");
        assertThat(cycles(graph)).as("package cycles in %s (each with one class-level edge per package pair)", ROOT).isEmpty();
    }

    @Test
    void appPackages_dependOnlyOnLowerLayers() throws IOException {
        Map<String, Map<String, String>> graph = packageGraph(classesDirectory());
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Map<String, String>> from : graph.entrySet()) {
            int at = LAYERS.indexOf(from.getKey());
            if (at < 0) {
                wrong.add(from.getKey() + " is in no layer: add it to LAYERS");
                continue;
            }
            for (Map.Entry<String, String> to : from.getValue().entrySet()) {
                if (LAYERS.indexOf(to.getKey()) <= at) {
                    wrong.add(from.getKey() + " -> " + to.getKey() + " (" + to.getValue() + ")");
                }
            }
        }
        assertThat(wrong).as("dependencies that point up or sideways").isEmpty();
    }

    @Test
    void cycles_ofAHandMadeGraph_areFound() {
        Map<String, Map<String, String>> graph = new TreeMap<>();
        graph.put("a", Map.of("b", "A uses B"));
        graph.put("b", Map.of("c", "B uses C"));
        graph.put("c", Map.of("a", "C uses A"));
        graph.put("d", Map.of("a", "D uses A"));
        assertThat(cycles(graph)).containsExactly("a -> b (A uses B), b -> c (B uses C), c -> a (C uses A)");
        graph.put("c", Map.of());
        assertThat(cycles(graph)).isEmpty();
    }

    /** The directory holding the application's compiled classes (target/classes). */
    private static Path classesDirectory() {
        try {
            return Path.of(QuarkusEntry.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Package to the packages of ours it uses, each with one example ("Class uses Class"). */
    static Map<String, Map<String, String>> packageGraph(Path classes) throws IOException {
        Map<String, Map<String, String>> graph = new TreeMap<>();
        Path base = classes.resolve(ROOT.replace('.', '/'));
        List<Path> files;
        try (Stream<Path> walk = Files.walk(base)) {
            files = walk.filter(p -> p.toString().endsWith(".class")).sorted().toList();
        }
        for (Path file : files) {
            ClassModel model = ClassFile.of().parse(file);
            String self = model.thisClass().asInternalName();
            String from = packageOf(self);
            Map<String, String> uses = graph.computeIfAbsent(from, k -> new TreeMap<>());
            for (String used : classesNamed(model)) {
                String to = packageOf(used);
                if (!to.equals(from) && (to.equals(ROOT) || to.startsWith(ROOT + "."))) {
                    uses.putIfAbsent(to, simpleName(self) + " uses " + simpleName(used));
                }
            }
        }
        return graph;
    }

    private static Set<String> classesNamed(ClassModel model) {
        Set<String> names = new TreeSet<>();
        for (PoolEntry e : model.constantPool()) {
            switch (e) {
                case ClassEntry c -> {
                    String n = c.asInternalName();
                    if (n.startsWith("[")) {
                        Matcher m = IN_DESCRIPTOR.matcher(n);
                        while (m.find()) {
                            names.add(m.group(1));
                        }
                    } else {
                        names.add(n);
                    }
                }
                case Utf8Entry u -> {
                    Matcher m = IN_DESCRIPTOR.matcher(u.stringValue());
                    while (m.find()) {
                        names.add(m.group(1));
                    }
                }
                default -> {}
            }
        }
        return names;
    }

    private static String packageOf(String internalName) {
        int slash = internalName.lastIndexOf('/');
        return slash < 0 ? "" : internalName.substring(0, slash).replace('/', '.');
    }

    private static String simpleName(String internalName) {
        return internalName.substring(internalName.lastIndexOf('/') + 1);
    }

    /**
     * Every strongly connected set of two or more packages (Tarjan), each as its edges inside the
     * set: "a -> b (example), ...".
     */
    static List<String> cycles(Map<String, Map<String, String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new java.util.HashSet<>();
        List<Set<String>> components = new ArrayList<>();
        int[] counter = {0};
        for (String v : new TreeSet<>(graph.keySet())) {
            if (!index.containsKey(v)) {
                connect(v, graph, index, low, stack, onStack, components, counter);
            }
        }
        List<String> found = new ArrayList<>();
        for (Set<String> c : components) {
            if (c.size() < 2) {
                continue;
            }
            List<String> edges = new ArrayList<>();
            for (String from : c) {
                for (Map.Entry<String, String> to : graph.getOrDefault(from, Map.of()).entrySet()) {
                    if (c.contains(to.getKey())) {
                        edges.add(from + " -> " + to.getKey() + " (" + to.getValue() + ")");
                    }
                }
            }
            found.add(String.join(", ", edges));
        }
        return found;
    }

    private static void connect(String v, Map<String, Map<String, String>> graph, Map<String, Integer> index,
                                Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
                                List<Set<String>> components, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]);
        counter[0]++;
        stack.push(v);
        onStack.add(v);
        for (String w : new TreeSet<>(graph.getOrDefault(v, Map.of()).keySet())) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, onStack, components, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            components.add(component);
        }
    }
}
