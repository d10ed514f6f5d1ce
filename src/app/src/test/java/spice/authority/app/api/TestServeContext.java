package spice.authority.app.api;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.stream.Stream;
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.ServeContext;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectoryProvider;

/**
 * For {@code @QuarkusTest}s: the context {@code serve} would have prepared, built on a real
 * authority in a fresh temporary directory (the platform's real directory provider and process
 * watcher), served on the test port over TCP with the bearer token {@link #TOKEN}. Replaces the
 * hand-over of {@code serve}, which a test never runs; everything is closed and removed when the
 * container stops.
 */
@Singleton
public class TestServeContext {
    /** The bearer token of the test helper, as a client sends it. */
    static final String TOKEN = "5eed".repeat(16);

    private Path root;

    @jakarta.inject.Inject
    spice.authority.app.runtime.HelperConfig config;

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    ServeContext serveContext() throws IOException, AuthorityException, spice.authority.os.DirectoryRefusedException,
            spice.authority.os.ProcessWatchException {
        root = Files.createTempDirectory("spice-quarkus-test");
        SecureDirectoryProvider provider = SecureDirectories.provider();
        // The format policy as serve chooses it: spice.authority.formats narrows the standard one.
        RunAuthority authority = RunAuthority.open(provider.open(root.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE),
                new SecureRandom(), spice.authority.app.runtime.FormatsSetting.policy(config.formats()));
        ProcessWatcher processes = provider.processWatcher();
        long euid = processes.realUid(ProcessHandle.current().pid()).orElseThrow();
        return new ServeContext(authority, null, null, null,
                new ServeContext.Endpoint.Tcp("127.0.0.1", 0, root.resolve("endpoint/token").toString()),
                BearerToken.of(TOKEN.getBytes(StandardCharsets.US_ASCII)), processes, euid);
    }

    void close(@Disposes ServeContext ctx) throws IOException {
        ctx.authority().close();
        ctx.bearerToken().close();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
