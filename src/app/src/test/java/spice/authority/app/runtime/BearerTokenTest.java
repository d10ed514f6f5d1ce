package spice.authority.app.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.crypto.EndpointProofMac;

class BearerTokenTest {
    private static final byte[] ASCII = "0123456789abcdef".repeat(4).getBytes(StandardCharsets.US_ASCII);

    @TempDir
    Path tmp;

    @Test
    void toString_isRedacted() {
        BearerToken t = BearerToken.of(ASCII);
        assertThat(t.toString()).isEqualTo("BearerToken[redacted]").doesNotContain("0123");
        assertThat(String.valueOf(BearerToken.generate(new SecureRandom()))).isEqualTo("BearerToken[redacted]");
    }

    @Test
    void matches_exactlyItsBytes_throughTheConstantTimeComparison() {
        BearerToken t = BearerToken.of(ASCII);
        assertThat(t.matches(ASCII.clone())).isTrue();
        byte[] lastDiffers = ASCII.clone();
        lastDiffers[lastDiffers.length - 1] ^= 1;
        assertThat(t.matches(lastDiffers)).isFalse();
        assertThat(t.matches(java.util.Arrays.copyOf(ASCII, ASCII.length - 1))).isFalse();
        assertThat(t.matches(new byte[0])).isFalse();
        assertThat(t.matches(null)).isFalse();
    }

    @Test
    void of_copiesItsInput_andRefusesAnEmptyToken() {
        byte[] mine = ASCII.clone();
        BearerToken t = BearerToken.of(mine);
        java.util.Arrays.fill(mine, (byte) 0);
        assertThat(t.matches(ASCII)).isTrue();
        assertThatThrownBy(() -> BearerToken.of(new byte[0])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void generate_is64LowercaseHexDigits_freshEachTime_andWrittenToTheTokenFile() throws Exception {
        BearerToken a = BearerToken.generate(new SecureRandom());
        BearerToken b = BearerToken.generate(new SecureRandom());
        try (SecureDirectory dir = SecureDirectories.provider().open(tmp.resolve("endpoint").toString(), OpenMode.CREATE_OR_VALIDATE)) {
            a.writeTo(dir, "token");
        }
        byte[] file = Files.readAllBytes(tmp.resolve("endpoint/token"));
        assertThat(new String(file, StandardCharsets.US_ASCII)).matches("[0-9a-f]{64}");
        assertThat(a.matches(file)).isTrue();
        assertThat(b.matches(file)).isFalse();
    }

    @Test
    void endpointProof_isTheSharedMacUnderTheTokenBytes() {
        byte[] nonce = new byte[EndpointProofMac.NONCE_BYTES];
        byte[] address = {127, 0, 0, 1};
        assertThat(HexFormat.of().formatHex(BearerToken.of(ASCII).endpointProof(nonce, address, 8421)))
                .isEqualTo(HexFormat.of().formatHex(EndpointProofMac.of(ASCII, nonce, address, 8421)));
    }

    @Test
    void close_zeroesTheBytes_andAZeroedTokenMatchesAndProvesNothing() throws Exception {
        BearerToken t = BearerToken.of(ASCII);
        t.close();
        t.close(); // idempotent
        Field f = BearerToken.class.getDeclaredField("hex");
        f.setAccessible(true);
        assertThat((byte[]) f.get(t)).hasSize(ASCII.length).containsOnly((byte) 0);
        assertThat(t.isDestroyed()).isTrue();
        assertThat(t.matches(ASCII)).isFalse();
        assertThat(t.matches(new byte[ASCII.length])).as("not even the zeros it now holds").isFalse();
        assertThatThrownBy(() -> t.endpointProof(new byte[32], new byte[4], 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageNotContaining("0123");
    }
}
