package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventLogTest {
    private static void append(EventLog log, int n) {
        for (int i = 0; i < n; i++) {
            log.append("run-1", Event.Type.MESSAGE_APPENDED, 1, null, "m" + i, null);
        }
    }

    @Test
    void newLog_startsAtOne_sequencesConsecutive() throws Exception {
        EventLog log = new EventLog(1, 16);
        append(log, 3);
        assertThat(log.readAfter(0)).extracting(Event::sequence).containsExactly(1L, 2L, 3L);
        assertThat(log.readAfter(2)).extracting(Event::sequence).containsExactly(3L);
        assertThat(log.readAfter(3)).isEmpty();
    }

    @Test
    void importedLog_emptyWindowAfterSnapshot_olderCursorRecoversFromSnapshotSequence() throws Exception {
        EventLog log = new EventLog(24, 16); // a snapshot at 23
        assertThat(log.head()).isEqualTo(23);
        assertThat(log.readAfter(23)).isEmpty();
        for (long c : new long[] {0, 1, 22}) {
            assertThatThrownBy(() -> log.readAfter(c)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                    e -> assertThat(e.recoveryCursor()).isEqualTo(23));
        }
        append(log, 2);
        assertThat(log.readAfter(23)).extracting(Event::sequence).containsExactly(24L, 25L);
        assertThat(log.readAfter(24)).extracting(Event::sequence).containsExactly(25L);
    }

    @Test
    void cursorBeyondHead_recoversFromHead() {
        EventLog log = new EventLog(1, 16);
        append(log, 2);
        assertThatThrownBy(() -> log.readAfter(9)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                e -> assertThat(e.recoveryCursor()).isEqualTo(2));
    }

    @Test
    void bounded_evictsOldest_recoveryCursorFollowsTheWindow() throws Exception {
        EventLog log = new EventLog(1, 3);
        append(log, 5); // retains 3..5
        assertThat(log.firstRetained()).isEqualTo(3);
        assertThat(log.readAfter(2)).extracting(Event::sequence).containsExactly(3L, 4L, 5L);
        assertThatThrownBy(() -> log.readAfter(1)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                e -> assertThat(e.recoveryCursor()).isEqualTo(2));
    }

    @Test
    void listeners_seeEachCommittedEventOnceInOrder() {
        EventLog log = new EventLog(7, 2);
        List<Long> seen = new ArrayList<>();
        log.listen(e -> seen.add(e.sequence()));
        append(log, 4);
        assertThat(seen).containsExactly(7L, 8L, 9L, 10L);
    }

    @Test
    void invalidBounds_refused() {
        assertThatThrownBy(() -> new EventLog(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EventLog(1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unsignedSequences_importAboveTwoPow63_andTheLastSequenceNeverWraps() throws Exception {
        EventLog high = new EventLog(Long.parseUnsignedLong("9223372036854775809"), 4);
        append(high, 1);
        assertThat(Long.toUnsignedString(high.head())).isEqualTo("9223372036854775809");
        assertThat(high.readAfter(Long.parseUnsignedLong("9223372036854775808"))).hasSize(1);
        EventLog last = new EventLog(-1L, 4); // 2^64-1: after a snapshot at 2^64-2
        append(last, 1);
        assertThat(last.head()).isEqualTo(-1L);
        assertThatThrownBy(() -> append(last, 1)).isInstanceOf(IllegalStateException.class);
        assertThat(last.head()).isEqualTo(-1L);
    }
}
