package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link IdentityLoader} on its own: the identity is created once and read back the same after,
 * and a file that is not an identity is refused with its reason, never replaced.
 */
class IdentityLoaderTest {

    @Test
    void load_createsTheIdentityOnce_thenReadsTheSameBack() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        IdentityLoader.Loaded created = IdentityLoader.load(dir, new SecureRandom());
        byte[] file = dir.snapshotFiles().get(RunAuthority.IDENTITY_KEY);
        assertThat(file).hasSize(AuthorityIdentity.FILE_LENGTH);

        IdentityLoader.Loaded read = IdentityLoader.load(dir, new SecureRandom());
        assertThat(read.identity().scopeIdHex()).isEqualTo(created.identity().scopeIdHex());
        assertThat(read.identity().generation()).isEqualTo(created.identity().generation());
        assertThat(dir.snapshotFiles().get(RunAuthority.IDENTITY_KEY)).as("not rewritten").isEqualTo(file);
        created.identity().close();
        read.identity().close();
    }

    @Test
    void load_aFileThatIsNoIdentity_isRefused_andKept() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        byte[] junk = "not an identity".getBytes(StandardCharsets.UTF_8);
        dir.plant(RunAuthority.IDENTITY_KEY, junk);
        assertThatThrownBy(() -> IdentityLoader.load(dir, new SecureRandom())).isInstanceOf(RuntimeException.class);
        assertThat(dir.snapshotFiles().get(RunAuthority.IDENTITY_KEY)).as("never replaced").isEqualTo(junk);
    }
}
