package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import spice.authority.core.AuthorityException;

/** One large body decoded at a time; small ones never wait; a wait in vain is a clean refusal. */
class LargeBodiesTest {

    @Test
    void secondLargeBody_waitsForTheFirst_thenIsRefusedCleanly() throws Exception {
        LargeBodies bodies = new LargeBodies(Duration.ofMillis(200));
        try (LargeBodies.Permit first = bodies.enter(BodyReader.LARGE_BODY)) {
            try (LargeBodies.Permit small = bodies.enter(BodyReader.LARGE_BODY - 1)) {
                assertThat(small).isNotNull(); // a small body never waits
            }
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> bodies.enter(16L << 20)).isInstanceOf(AuthorityException.Unavailable.class)
                    .hasMessageContaining("nothing was done");
            assertThat(System.nanoTime() - t0).as("it waited for the first").isGreaterThanOrEqualTo(150_000_000L);
        }
        try (LargeBodies.Permit next = bodies.enter(16L << 20)) {
            assertThat(next).isNotNull(); // free again once the first is closed
        }
    }

    @Test
    void permit_closedTwice_releasesOnce() throws Exception {
        LargeBodies bodies = new LargeBodies(Duration.ofMillis(100));
        LargeBodies.Permit p = bodies.enter(BodyReader.LARGE_BODY);
        p.close();
        p.close();
        try (LargeBodies.Permit a = bodies.enter(BodyReader.LARGE_BODY)) {
            assertThatThrownBy(() -> bodies.enter(BodyReader.LARGE_BODY)).isInstanceOf(AuthorityException.Unavailable.class);
        }
    }
}
