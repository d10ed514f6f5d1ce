package spice.authority.app.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;

/**
 * A platform whose TCP peer lookup is scripted: it answers every {@link #tcpPeerPid} with one pid,
 * or throws one exception, and records each question as {@code PEERPORT->LOCALPORT}. It opens no
 * directory. For the tests of the server's and the CLI's TCP checks.
 */
public final class ScriptedTcpPlatform implements SecureDirectoryProvider {
    /** Every question asked, in order, as {@code PEERPORT->LOCALPORT}. */
    public final List<String> asked = new ArrayList<>();
    private final boolean identifies;
    private final Object answer;

    /**
     * @param identifies what {@link #identifiesTcpPeers()} says
     * @param answer a {@link Long} pid, or an {@link IOException} or {@link RuntimeException} to throw
     */
    public ScriptedTcpPlatform(boolean identifies, Object answer) {
        if (!(answer instanceof Long || answer instanceof IOException || answer instanceof RuntimeException)) {
            throw new IllegalArgumentException("answer: a Long pid, an IOException or a RuntimeException");
        }
        this.identifies = identifies;
        this.answer = answer;
    }

    /** A platform that identifies TCP peers and answers {@code answer}. */
    public static ScriptedTcpPlatform answering(Object answer) {
        return new ScriptedTcpPlatform(true, answer);
    }

    @Override
    public String platform() {
        return "scripted";
    }

    @Override
    public boolean isSupported() {
        return true;
    }

    @Override
    public SecureDirectory open(String path, OpenMode mode) {
        throw new UnsupportedOperationException("the scripted platform opens no directory");
    }

    @Override
    public String defaultDirectory() {
        return null;
    }

    @Override
    public boolean identifiesTcpPeers() {
        return identifies;
    }

    @Override
    public long tcpPeerPid(InetSocketAddress peer, InetSocketAddress local) throws IOException {
        asked.add(peer.getPort() + "->" + local.getPort());
        if (answer instanceof IOException e) {
            throw e;
        }
        if (answer instanceof RuntimeException e) {
            throw e;
        }
        return (Long) answer;
    }
}
