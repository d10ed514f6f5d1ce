package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Leases}: open, closing, closed, and the one shutdown the last lease or the close runs. */
class LeasesTest {
    private final AtomicInteger shutdowns = new AtomicInteger();
    private final Leases leases = new Leases(shutdowns::incrementAndGet);

    @Test
    void close_withoutLeases_shutsDownOnce() throws Exception {
        leases.acquire();
        leases.acquire();
        assertThat(leases.outstanding()).isEqualTo(2);
        leases.release();
        leases.release();
        assertThat(leases.state()).isEqualTo("open");
        assertThat(shutdowns).hasValue(0);

        leases.close(Duration.ZERO);
        leases.close(Duration.ZERO);
        assertThat(leases.state()).isEqualTo("closed");
        assertThat(shutdowns).hasValue(1);
        assertThatThrownBy(leases::acquire).isInstanceOf(AuthorityException.Closed.class).hasMessageContaining("closed");
    }

    @Test
    void close_withALease_isBusyAndClosing_theLastReleaseShutsDown() throws Exception {
        leases.acquire();
        assertThatThrownBy(() -> leases.close(Duration.ZERO)).isInstanceOf(AuthorityException.Busy.class)
                .hasMessageContaining("1 run or import lease(s) still outstanding");
        assertThat(leases.state()).isEqualTo("closing");
        assertThatThrownBy(leases::acquire).isInstanceOf(AuthorityException.Closed.class).hasMessageContaining("closing");
        assertThat(shutdowns).hasValue(0);

        leases.release();
        assertThat(leases.state()).isEqualTo("closed");
        assertThat(shutdowns).hasValue(1);
    }

    @Test
    void close_waitsForALeaseReleasedMeanwhile() throws Exception {
        leases.acquire();
        CountDownLatch closing = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            try {
                closing.countDown();
                leases.close(Duration.ofMinutes(1));
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        assertThat(closing.await(10, TimeUnit.SECONDS)).isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!leases.state().equals("closing") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(leases.state()).isEqualTo("closing");
        leases.release();
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(closer.isAlive()).isFalse();
        assertThat(failed.get()).isNull();
        assertThat(leases.state()).isEqualTo("closed");
        assertThat(shutdowns).hasValue(1);
    }

    @Test
    void aFailingShutdown_stillCountsAsShutDown() {
        Leases failing = new Leases(() -> {
            throw new IllegalStateException("close failed");
        });
        assertThatThrownBy(() -> failing.close(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThat(failing.state()).isEqualTo("closed");
        assertThatThrownBy(failing::acquire).isInstanceOf(AuthorityException.Closed.class);
    }
}
