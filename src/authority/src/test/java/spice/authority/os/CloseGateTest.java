package spice.authority.os;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CloseGateTest {

    @Test
    void close_waitsForTheOperationInProgress_thenReleasesOnce() throws Exception {
        CloseGate gate = new CloseGate();
        AtomicInteger released = new AtomicInteger();
        gate.enter(() -> "/d");
        CountDownLatch closing = new CountDownLatch(1);
        Thread closer = Thread.ofPlatform().start(() -> {
            closing.countDown();
            gate.close(released::incrementAndGet);
        });
        closing.await();
        closer.join(300);
        assertThat(closer.isAlive()).as("close waits while an operation holds the handle").isTrue();
        assertThat(released).hasValue(0);
        gate.exit();
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(closer.isAlive()).isFalse();
        assertThat(released).hasValue(1);
        gate.close(released::incrementAndGet);
        assertThat(released).as("released once").hasValue(1);
        assertThat(gate.isClosed()).isTrue();
    }

    @Test
    void enter_afterClose_isRefused_namingTheDirectory() {
        CloseGate gate = new CloseGate();
        gate.close(() -> {});
        assertThatThrownBy(() -> gate.enter(() -> "/home/me/authority"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("secure directory is closed: /home/me/authority");
        // the refused enter holds nothing: a second close still returns at once
        gate.close(() -> { throw new AssertionError("released twice"); });
    }

    @Test
    void aReleaseThatThrows_stillClosesTheGate_andIsNotRunAgain() {
        CloseGate gate = new CloseGate();
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> gate.close(() -> {
            runs.incrementAndGet();
            throw new IllegalStateException("close failed");
        })).hasMessage("close failed");
        gate.close(runs::incrementAndGet);
        assertThat(runs).hasValue(1);
        assertThatThrownBy(() -> gate.enter(() -> "/d")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void operationsRunTogether() throws Exception {
        CloseGate gate = new CloseGate();
        gate.enter(() -> "/d");
        Thread other = Thread.ofPlatform().start(() -> {
            gate.enter(() -> "/d");
            gate.exit();
        });
        other.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(other.isAlive()).as("a second operation is not blocked by the first").isFalse();
        gate.exit();
    }
}
