package spice.authority.app.demo;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds what the demo launches: the host library's class path (host, snapshot and protobuf, as a
 * Java host would have them) and the packaged helper ({@code quarkus-run.jar}) of this build.
 *
 * <p>Guarantees: only paths of this installation, found from where the running classes were
 * loaded; nothing is searched on {@code PATH} or in the working directory.
 */
final class HostLauncher {
    /** Classes whose jars (or class directories) make up a Java host's class path. */
    private static final List<String> HOST_CLASSES = List.of(
            "spice/authority/host/demo/DemoHost.class",
            "spice/authority/host/store/demo/RestartHost.class",
            "org/sqlite/JDBC.class",
            "spice/authority/snapshot/payload/Snapshot.class",
            "com/google/protobuf/InvalidProtocolBufferException.class",
            "com/google/protobuf/util/JsonFormat.class",
            "com/google/gson/Gson.class");

    private HostLauncher() {}

    static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** The class path of a host process. */
    static List<Path> hostClassPath() throws IOException {
        Set<Path> out = new LinkedHashSet<>();
        ClassLoader cl = HostLauncher.class.getClassLoader();
        for (String resource : HOST_CLASSES) {
            URL url = cl.getResource(resource);
            if (url == null) {
                if (resource.startsWith("spice/") || resource.contains("InvalidProtocolBuffer") || resource.startsWith("org/sqlite/")) {
                    throw new IOException("the host library is not part of this build (" + resource + " not found)");
                }
                continue; // optional: only needed for JSON views of envelopes
            }
            out.add(root(url, resource));
        }
        return new ArrayList<>(out);
    }

    /** The jar or class directory holding {@code resource}, from its URL. */
    private static Path root(URL url, String resource) throws IOException {
        try {
            String s = url.toString();
            if (s.startsWith("jar:")) {
                int bang = s.indexOf("!/");
                return Path.of(new java.net.URI(s.substring(4, bang)));
            }
            if (s.startsWith("file:")) {
                Path file = Path.of(url.toURI());
                Path root = file;
                for (int i = 0; i < resource.split("/").length; i++) {
                    root = root.getParent();
                }
                return root;
            }
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IOException("cannot locate " + resource + " in " + url.getProtocol() + " class path entry");
        }
        throw new IOException("cannot locate " + resource + ": class path entry of type " + url.getProtocol());
    }

    /**
     * The packaged helper of this build: {@code quarkus-run.jar} beside the {@code lib/} directory
     * holding the host library (the fast-jar layout and the app-image share it).
     */
    static Path helperRunner() throws IOException {
        for (Path p : hostClassPath()) {
            if (p.getFileName().toString().startsWith("spice.authority.spice-authority-host")) {
                Path root = p.getParent() == null ? null : p.getParent().getParent();
                root = root == null ? null : root.getParent();
                if (root != null && Files.isRegularFile(root.resolve("quarkus-run.jar"))) {
                    return root.resolve("quarkus-run.jar");
                }
            }
        }
        throw new IOException("no packaged helper (quarkus-run.jar) found beside this build's libraries; "
                + "build it with ./mvnw package, or point the demo at a running helper with --socket");
    }
}
