package spice.authority.app.serve;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The runner's fast path for 'serve' takes exactly the four options and leaves everything else to picocli. */
class ServeFastArgsTest {

    @Test
    void fastArgs_theFourOptions_inBothSpellings() {
        ServeCommand c = ServeCommand.fastArgs(new String[] {"serve", "--authority-dir", "/a", "--socket=/b/s.sock"});
        assertThat(c).isNotNull();
        assertThat(c.authorityDir).isEqualTo("/a");
        assertThat(c.socket).isEqualTo("/b/s.sock");
        assertThat(c.listen).isNull();
        ServeCommand t = ServeCommand.fastArgs(new String[] {"serve", "--listen=127.0.0.1:0", "--token-file", "/t/token"});
        assertThat(t.listen).isEqualTo("127.0.0.1:0");
        assertThat(t.tokenFile).isEqualTo("/t/token");
        assertThat(ServeCommand.fastArgs(new String[] {"serve"})).isNotNull();
    }

    @Test
    void fastArgs_anythingElse_goesThroughPicocli() {
        String[][] others = {
            {}, {"status"}, {"serve", "--help"}, {"serve", "-h"}, {"serve", "--version"}, {"serve", "--socket"},
            {"serve", "--socket", "--listen"}, {"serve", "--sock", "/x"}, {"serve", "--socket", "/a", "--socket", "/b"},
            {"serve", "--socket="}, {"serve", "extra"}, {"snapshot", "validate", "x"}
        };
        for (String[] a : others) {
            assertThat(ServeCommand.fastArgs(a)).as(String.join(" ", a)).isNull();
        }
    }
}
