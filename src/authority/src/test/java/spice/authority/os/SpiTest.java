package spice.authority.os;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The pure-Java parts of the SPI: names, refusals, provider selection, forwarding. */
class SpiTest {

    @ParameterizedTest
    @ValueSource(strings = {"identity.key", "identity.lock",
            "run-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.state",
            "run-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.lock", "a", "A-b_c.9"})
    void fileNames_wireFormatNames_valid(String name) throws Exception {
        assertThat(FileNames.requireValid("/d", name)).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", ".hidden", "a/b", "a\\b", "a\u0000b", "-x", "_x", "a b", "CON:x", "é"})
    void fileNames_unsafeNames_refusedAsName(String name) {
        assertThatThrownBy(() -> FileNames.requireValid("/d", name))
                .isInstanceOfSatisfying(DirectoryRefusedException.class, e -> {
                    assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.NAME);
                    assertThat(e.component()).startsWith("/d/");
                });
    }

    @Test
    void fileNames_tooLong_refused() {
        assertThatThrownBy(() -> FileNames.requireValid("/d", "a".repeat(129)))
                .isInstanceOf(DirectoryRefusedException.class);
        assertThat(FileNames.isLockName("x.lock")).isTrue();
        assertThat(FileNames.isLockName("x.state")).isFalse();
    }

    @Test
    void temporaryName_isDotTargetDot24HexDotTmp_andTemporaryTargetInvertsIt() {
        byte[] nonce = new byte[FileNames.TEMPORARY_NONCE_BYTES];
        nonce[0] = (byte) 0xab;
        String target = "run-" + "0f".repeat(32) + ".state";
        String temp = FileNames.temporaryName(target, nonce);
        assertThat(temp).isEqualTo("." + target + ".ab0000000000000000000000.tmp");
        assertThat(FileNames.temporaryTarget(temp)).contains(target);
        assertThat(FileNames.temporaryTarget(".identity.key.0123456789abcdef01234567.tmp")).contains("identity.key");
        assertThatThrownBy(() -> FileNames.temporaryName("x.lock", nonce)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FileNames.temporaryName(".x", nonce)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FileNames.temporaryName("x", new byte[11])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void temporaryNonce_freshPerCall_andPerThread_andMakesTemporaryNames() throws Exception {
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 500; i++) {
                    byte[] nonce = FileNames.temporaryNonce();
                    assertThat(nonce).hasSize(FileNames.TEMPORARY_NONCE_BYTES);
                    seen.add(java.util.HexFormat.of().formatHex(nonce));
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(seen).as("4,000 nonces of 96 bits, from 8 threads at once, all distinct").hasSize(4_000);
        String temp = FileNames.temporaryName("identity.key", FileNames.temporaryNonce());
        assertThat(FileNames.temporaryTarget(temp)).contains("identity.key");
    }

    @ParameterizedTest
    @ValueSource(strings = {"identity.key", "identity.key.0123456789abcdef01234567.tmp",
            ".identity.key.0123456789abcdef0123456.tmp", ".identity.key.0123456789abcdef012345678.tmp",
            ".identity.key.0123456789ABCDEF01234567.tmp", ".identity.key.0123456789abcdef01234567.tmp.bak",
            ".identity.key.0123456789abcdef01234567.TMP", ".identity.key.0123456789abcdef01234567tmp",
            "..identity.key.0123456789abcdef01234567.tmp", ".identity.lock.0123456789abcdef01234567.tmp",
            "..0123456789abcdef01234567.tmp", ".-x.0123456789abcdef01234567.tmp", ".a/b.0123456789abcdef01234567.tmp",
            ".a b.0123456789abcdef01234567.tmp", ".\u00e9.0123456789abcdef01234567.tmp",
            ".x.0123456789abcdef01234567.tmp\n", ".x.bare.tmp", ".x.tmp", ""})
    void temporaryTarget_nearMisses_areNotTemporaries(String name) {
        assertThat(FileNames.temporaryTarget(name.translateEscapes())).isEmpty();
    }

    @Test
    void refusal_nothingWritten_isFalseUnlessSaid_andSurvivesMarking() {
        var plain = new DirectoryRefusedException(DirectoryRefusedException.Category.IO, "/p/x", "write: ENOSPC");
        assertThat(plain.nothingWritten()).isFalse();
        var marked = plain.asNothingWritten();
        assertThat(marked.nothingWritten()).isTrue();
        assertThat(marked.getMessage()).isEqualTo(plain.getMessage()).isEqualTo("/p/x: IO (write: ENOSPC)");
        assertThat(marked.category()).isEqualTo(plain.category());
        assertThat(marked.asNothingWritten()).isSameAs(marked);
    }

    @Test
    void printable_escapesControlCharacters() {
        assertThat(FileNames.printable("a\nb\u0000c\u007f")).isEqualTo("a\\x0ab\\x00c\\x7f");
        assertThat(FileNames.printable(null)).isEqualTo("<null>");
    }

    @Test
    void refusal_isOneLineNamingComponentCategoryAndReason() {
        var e = new DirectoryRefusedException(DirectoryRefusedException.Category.PERMS, "/home/u/x",
                "mode 0775: group- or world-writable without the sticky bit");
        assertThat(e.getMessage())
                .isEqualTo("/home/u/x: PERMS (mode 0775: group- or world-writable without the sticky bit)");
        assertThat(e.getStackTrace()).isEmpty();
        assertThat(e.getCause()).isNull();
    }

    private record Fake(String platform, boolean isSupported) implements SecureDirectoryProvider {
        @Override
        public SecureDirectory open(String path, OpenMode mode) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String defaultDirectory() {
            return null;
        }
    }

    @Test
    void select_noProvider_refusesWithoutFallback() {
        var s = SecureDirectories.select(List.of(), "Plan9", "mips");
        assertThatThrownBy(s::get).isInstanceOf(UnsupportedPlatformException.class)
                .hasMessageContaining("Plan9/mips").hasMessageContaining("no provider on the class path");
    }

    @Test
    void select_onlyUnsupportedProviders_refuses() {
        var s = SecureDirectories.select(List.of(new Fake("posix", false)), "FreeBSD", "amd64");
        assertThatThrownBy(s::get).isInstanceOf(UnsupportedPlatformException.class)
                .hasMessageContaining("no provider supports it");
    }

    @Test
    void select_twoSupportingProviders_refuses() {
        var s = SecureDirectories.select(List.of(new Fake("a", true), new Fake("b", true)), "Linux", "amd64");
        assertThatThrownBy(s::get).isInstanceOf(UnsupportedPlatformException.class)
                .hasMessageContaining("more than one");
    }

    @Test
    void select_exactlyOneSupporting_isChosen() {
        Fake yes = new Fake("yes", true);
        assertThat(SecureDirectories.select(List.of(new Fake("no", false), yes), "Linux", "amd64").get())
                .isSameAs(yes);
    }

    @Test
    void provider_defaults_refuseTcpPeersWithoutFallback() {
        Fake p = new Fake("plain", true);
        assertThat(p.identifiesTcpPeers()).isFalse();
        java.net.InetSocketAddress a = new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 1);
        assertThatThrownBy(() -> p.tcpPeerPid(a, a)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("no TCP peer identification on plain");
        assertThatThrownBy(() -> p.peerCredentials(3)).isInstanceOf(UnsupportedOperationException.class);
    }

    /** A watcher whose uids are a table; only {@code realUid} is real, the rest refuses. */
    private static ProcessWatcher uids(java.util.Map<Long, Long> uidOf, boolean failFor7) {
        return new ProcessWatcher() {
            @Override public java.util.OptionalLong startTime(long pid) { throw new UnsupportedOperationException(); }
            @Override public Liveness liveness(long pid, long startTime) { throw new UnsupportedOperationException(); }
            @Override public java.util.OptionalLong parentPid(long pid) { throw new UnsupportedOperationException(); }
            @Override public Watch watch(long pid, long startTime, Runnable onExit) { throw new UnsupportedOperationException(); }
            @Override
            public java.util.OptionalLong realUid(long pid) throws ProcessWatchException {
                if (failFor7 && pid == 7) {
                    throw new ProcessWatchException("unreadable");
                }
                Long u = uidOf.get(pid);
                return u == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(u);
            }
        };
    }

    @Test
    void isOwnUser_default_comparesRealUidWithOurs() throws Exception {
        long me = ProcessHandle.current().pid();
        ProcessWatcher w = uids(java.util.Map.of(me, 1000L, 5L, 1000L, 6L, 1001L), true);
        assertThat(w.isOwnUser(5)).isTrue();
        assertThat(w.isOwnUser(6)).as("another uid").isFalse();
        assertThat(w.isOwnUser(8)).as("no such process").isFalse();
        assertThatThrownBy(() -> w.isOwnUser(7)).isInstanceOf(ProcessWatchException.class);
        ProcessWatcher noSelf = uids(java.util.Map.of(5L, 1000L), false);
        assertThatThrownBy(() -> noSelf.isOwnUser(5)).isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("own uid");
    }

    @Test
    void provider_withoutAnyImplementationOnClassPath_throwsUnsupportedPlatform() {
        // This module has no implementation on its test class path.
        assertThatThrownBy(SecureDirectories::provider).isInstanceOf(UnsupportedPlatformException.class);
        assertThatThrownBy(SecureDirectories::provider).isInstanceOf(UnsupportedPlatformException.class);
    }

    @Test
    void forwarding_delegatesEveryCall() throws Exception {
        List<String> calls = new ArrayList<>();
        SecureDirectory recorder = new SecureDirectory() {
            @Override public String path() { calls.add("path"); return "/p"; }
            @Override public FileIdentity identity() { calls.add("identity"); return new FileIdentity(1, 2); }
            @Override public boolean createdLeaf() { calls.add("createdLeaf"); return true; }
            @Override public OpenMode openMode() { calls.add("openMode"); return OpenMode.VALIDATE_ONLY; }
            @Override public void revalidate() { calls.add("revalidate"); }
            @Override public FileIdentity checkFile(String name) { calls.add("check " + name); return new FileIdentity(3, 4); }
            @Override public byte[] read(String name, int maxBytes) { calls.add("read " + name); return new byte[0]; }
            @Override public void writeAtomically(String name, byte[] data) { calls.add("write " + name); }
            @Override public List<String> list() { calls.add("list"); return List.of("x"); }
            @Override public void probeWrite(String target) { calls.add("probe " + target); }
            @Override public boolean removeTemporary(String name) { calls.add("remove " + name); return true; }
            @Override public StableLock lock(String name, LockMode mode) { calls.add("lock " + name); return null; }
            @Override public void close() { calls.add("close"); }
        };
        // A fault-injecting decorator of the kind the authority's tests use.
        SecureDirectory failing = new ForwardingSecureDirectory(recorder) {
            @Override
            public void writeAtomically(String name, byte[] data) throws DirectoryRefusedException {
                throw new DirectoryRefusedException(DirectoryRefusedException.Category.IO, path() + "/" + name, "injected");
            }
        };
        SecureDirectory plain = new ForwardingSecureDirectory(recorder) {};
        plain.path();
        plain.identity();
        plain.createdLeaf();
        plain.openMode();
        plain.revalidate();
        assertThat(plain.checkFile("c")).isEqualTo(new FileIdentity(3, 4));
        plain.read("r", 1);
        plain.writeAtomically("w", new byte[0]);
        assertThat(plain.list()).containsExactly("x");
        plain.probeWrite("t");
        assertThat(plain.removeTemporary(".w.000000000000000000000000.tmp")).isTrue();
        plain.lock("l.lock", LockMode.BLOCKING);
        plain.close();
        assertThat(calls).containsExactly("path", "identity", "createdLeaf", "openMode", "revalidate", "check c", "read r",
                "write w", "list", "probe t", "remove .w.000000000000000000000000.tmp", "lock l.lock", "close");
        assertThatThrownBy(() -> failing.writeAtomically("x", new byte[0]))
                .hasMessage("/p/x: IO (injected)");
        assertThat(new FileIdentity(-1, 5).toString()).isEqualTo("18446744073709551615:5");
    }

    @Test
    void fileIdentity_128BitIds_keptWhole() {
        assertThat(new FileIdentity(1, 2)).isEqualTo(new FileIdentity(1, 2, 0));
        assertThat(new FileIdentity(1, 2, 3)).isNotEqualTo(new FileIdentity(1, 2)).isNotEqualTo(new FileIdentity(1, 2, 4));
        assertThat(new FileIdentity(7, -1, -1).toString()).isEqualTo("7:0x" + "f".repeat(32));
    }
}
