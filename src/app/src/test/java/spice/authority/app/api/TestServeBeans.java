package spice.authority.app.api;

import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Alternative;
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
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectoryProvider;

/**
 * For {@code @QuarkusTest}s: the beans {@code serve} would have handed over, built on a real
 * authority in a fresh temporary directory (the platform's real directory provider and process
 * watcher), served on the test port over TCP with the bearer token {@link #TOKEN}. Replaces the
 * hand-over of {@code serve}, which a test never runs; everything is closed and removed when the
 * container stops.
 */
@Singleton
public class TestServeBeans {
    /** The bearer token of the test helper, as a client sends it. */
    static final String TOKEN = "5eed".repeat(16);

    private final Path root;
    private final RunAuthority authority;
    private final ProcessWatcher processes;
    private final BearerToken token = BearerToken.of(TOKEN.getBytes(StandardCharsets.US_ASCII));

    @jakarta.inject.Inject
    TestServeBeans(spice.authority.app.runtime.HelperConfig config) throws IOException, AuthorityException, DirectoryRefusedException {
        root = Files.createTempDirectory("spice-quarkus-test");
        SecureDirectoryProvider provider = SecureDirectories.provider();
        // The format policy as serve chooses it: spice.authority.formats narrows the standard one.
        authority = RunAuthority.open(provider.open(root.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE),
                new SecureRandom(), spice.authority.app.runtime.FormatsSetting.policy(config.formats()));
        processes = provider.processWatcher();
    }

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    RunAuthority authority() {
        return authority;
    }

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    ProcessWatcher processes() {
        return processes;
    }

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    Endpoint endpoint() {
        return new Endpoint.Tcp("127.0.0.1", 0, root.resolve("endpoint/token").toString());
    }

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    PeerPolicy peers() throws ProcessWatchException {
        return PeerPolicy.tokenOnly(processes.realUid(ProcessHandle.current().pid()).orElseThrow());
    }

    @Produces
    @Dependent
    @Alternative
    @Priority(1)
    BearerToken bearerToken() {
        return token;
    }

    @PreDestroy
    void close() throws IOException {
        authority.close();
        token.close();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
