package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CancellationTest {
    @Test
    void deadlines_pastZeroOrNegative_futureNot_hugeMeansNone() throws Exception {
        assertThat(Cancellation.withTimeout(Duration.ZERO).isCancelled()).isTrue();
        assertThat(Cancellation.withTimeout(Duration.ofSeconds(-5)).isCancelled()).isTrue();
        assertThat(Cancellation.withTimeout(Duration.ofMinutes(10)).isCancelled()).isFalse();
        // Durations whose nanoseconds overflow a long are no deadline (they used to throw).
        Cancellation forever = Cancellation.withTimeout(Duration.ofSeconds(Long.MAX_VALUE));
        assertThat(forever.isCancelled()).isFalse();
        forever.check("x");
        forever.cancel();
        assertThatThrownBy(() -> forever.check("x")).isInstanceOf(AuthorityException.Cancelled.class);
    }

    @Test
    void remainingNanos_boundedByTheTimeout_zeroWhenPast_unboundedWithoutADeadline() {
        long left = Cancellation.withTimeout(Duration.ofSeconds(10)).remainingNanos();
        assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10).toNanos());
        assertThat(Cancellation.withTimeout(Duration.ofSeconds(-1)).remainingNanos()).isZero();
        assertThat(Cancellation.withTimeout(Duration.ofSeconds(Long.MAX_VALUE)).remainingNanos()).isEqualTo(Long.MAX_VALUE);
        assertThat(Cancellation.none().remainingNanos()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void noneIsNeverCancelled() {
        Cancellation.none().cancel();
        assertThat(Cancellation.none().isCancelled()).isFalse();
    }
}
