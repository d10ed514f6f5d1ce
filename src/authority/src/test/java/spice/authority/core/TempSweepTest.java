package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import spice.authority.os.LockMode;
import spice.authority.os.StableLock;

/**
 * {@link TempSweep} on its own: the temporaries of identity and record writes go, unless their
 * run's lock is held; nothing else is touched.
 */
class TempSweepTest {
    private static final String HEX24 = "0123456789abcdef01234567";
    private static final byte[] JUNK = "left by a crash".getBytes(StandardCharsets.UTF_8);

    @Test
    void sweep_removesFreeTemporaries_keepsThoseOfALockedRun_andEverythingElse() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        String free = RecordCodec.fileStem("free");
        String owned = RecordCodec.fileStem("owned");
        String identityTemp = ".identity.key." + HEX24 + ".tmp";
        String freeTemp = "." + free + ".state." + HEX24 + ".tmp";
        String neverLockedTemp = "." + RecordCodec.fileStem("never") + ".state." + HEX24 + ".tmp";
        String ownedTemp = "." + owned + ".state." + HEX24 + ".tmp";
        String lockTemp = "." + free + ".lock." + HEX24 + ".tmp";
        dir.lock(free + ".lock", LockMode.NON_BLOCKING).close(); // the lock file exists, free
        StableLock ownedLock = dir.lock(owned + ".lock", LockMode.NON_BLOCKING);
        for (String n : new String[] {identityTemp, freeTemp, neverLockedTemp, ownedTemp, lockTemp, "notes.txt"}) {
            dir.plant(n, JUNK);
        }

        assertThat(TempSweep.sweep(dir)).isEqualTo(3);

        assertThat(dir.snapshotFiles()).doesNotContainKeys(identityTemp, freeTemp, neverLockedTemp)
                .containsKeys(ownedTemp, lockTemp, "notes.txt", free + ".lock", owned + ".lock");
        ownedLock.close();
        assertThat(TempSweep.sweep(dir)).as("its owner is gone").isEqualTo(1);
        assertThat(dir.snapshotFiles()).doesNotContainKey(ownedTemp);
    }
}
