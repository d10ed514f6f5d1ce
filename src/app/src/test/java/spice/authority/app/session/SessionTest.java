package spice.authority.app.session;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SessionTest {
    @Test
    void toString_neverShowsTheSessionId_notEvenInPart() {
        String id = "0123456789abcdef0123456789abcdef";
        Session s = new Session(id, 4242, 17, true);
        assertThat(s.toString()).contains("pid=4242").doesNotContain(id.substring(0, 6));
        s.markClosed("host gone");
        assertThat(s.toString()).contains("closed: host gone").doesNotContain(id.substring(0, 6));
    }
}
