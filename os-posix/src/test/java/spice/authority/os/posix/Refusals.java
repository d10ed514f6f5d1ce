package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Path;
import java.util.Map;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.OpenMode;

/** Assertions shared by the os-posix tests: every refusal is checked together with "nothing changed". */
final class Refusals {

    static final PosixSecureDirectoryProvider PROVIDER = new PosixSecureDirectoryProvider();

    private Refusals() {}

    interface Action {
        void run() throws Exception;
    }

    /** Runs {@code action} and returns its refusal; fails if it does not throw one. */
    static DirectoryRefusedException refusal(Action action) {
        try {
            action.run();
        } catch (DirectoryRefusedException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("expected a DirectoryRefusedException, got " + e, e);
        }
        return fail("expected a DirectoryRefusedException, but the action succeeded");
    }

    /** Asserts the refusal's category and component, and that nothing under the tree changed. */
    static DirectoryRefusedException assertRefused(TestTree tree, Category category, Path component, Action action)
            throws Exception {
        return assertRefused(tree, category, component.toString(), action);
    }

    static DirectoryRefusedException assertRefused(TestTree tree, Category category, String component, Action action)
            throws Exception {
        Map<String, String> before = tree.snapshot();
        DirectoryRefusedException e = refusal(action);
        assertThat(e.category()).as("category of: %s", e.getMessage()).isEqualTo(category);
        assertThat(e.component()).as("component of: %s", e.getMessage()).isEqualTo(component);
        assertThat(e.getMessage()).startsWith(component + ": " + category + " (");
        assertThat(tree.snapshot()).as("nothing on disk changed").isEqualTo(before);
        return e;
    }

    /** Opening {@code path} in both modes is refused identically and changes nothing. */
    static void assertOpenRefused(TestTree tree, Category category, Path component, String path) throws Exception {
        for (OpenMode mode : OpenMode.values()) {
            assertRefused(tree, category, component, () -> {
                PROVIDER.open(path, mode).close(); // must throw before returning
            });
        }
    }
}
