package spice.authority.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Floods a running helper with oversized and slow requests over its Unix socket and samples the
 * helper's resident memory, threads and open descriptors before, during and after (issue 11).
 *
 * <pre>java -cp bench/target/benchmarks.jar spice.authority.bench.Flood SOCKET HELPER_PID [SECONDS] [CLIENTS]</pre>
 *
 * <p>Each client loops over four kinds of request: a 16,000,000-byte snapshot body with
 * Content-Length, a chunked 20 MiB snapshot body (over the 16 MiB limit), a chunked 2 MiB body to
 * the 64 KiB control endpoint {@code /v1/sessions}, and a slow body (Content-Length 1 MiB, 4 KiB
 * every 200 ms, abandoned after 3 s). It prints the answers by status and a sample every 5 s.
 */
public final class Flood {
    private Flood() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Flood SOCKET HELPER_PID [SECONDS=60] [CLIENTS=8]");
            System.exit(2);
        }
        Path socket = Path.of(args[0]);
        long pid = Long.parseLong(args[1]);
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 60;
        int clients = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        System.out.println("phase   t(s)  VmRSS(MiB)  Threads  fds");
        sample("before", 0, pid);
        Map<String, LongAdder> answers = new ConcurrentHashMap<>();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] ts = new Thread[clients];
        for (int i = 0; i < clients; i++) {
            ts[i] = Thread.ofPlatform().start(() -> {
                while (System.nanoTime() < end) {
                    String kind = switch (ThreadLocalRandom.current().nextInt(4)) {
                        case 0 -> "16MB-content-length";
                        case 1 -> "20MiB-chunked";
                        case 2 -> "2MiB-chunked-control";
                        default -> "slow";
                    };
                    String status;
                    try {
                        status = Integer.toString(request(socket, kind));
                    } catch (IOException e) {
                        status = "closed";
                    } catch (InterruptedException e) {
                        return;
                    }
                    answers.computeIfAbsent(kind + " " + status, k -> new LongAdder()).increment();
                }
            });
        }
        long t0 = System.nanoTime();
        while (System.nanoTime() < end) {
            Thread.sleep(5000);
            sample("during", (System.nanoTime() - t0) / 1_000_000_000L, pid);
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int s = 5; s <= 15; s += 5) {
            Thread.sleep(5000);
            sample("after", (System.nanoTime() - t0) / 1_000_000_000L, pid);
        }
        System.out.println("answers (kind status: count):");
        new TreeMap<>(answers).forEach((k, v) -> System.out.println("  " + k + ": " + v.sum()));
    }

    private static void sample(String phase, long t, long pid) throws IOException {
        long rssKb = 0;
        long threads = 0;
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                rssKb = Long.parseLong(line.replaceAll("\\D", ""));
            } else if (line.startsWith("Threads:")) {
                threads = Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        long fds;
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = s.count();
        }
        System.out.printf("%-7s %4d  %10.1f  %7d  %3d%n", phase, t, rssKb / 1024.0, threads, fds);
    }

    private static int request(Path socket, String kind) throws IOException, InterruptedException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            OutputStream out = Channels.newOutputStream(ch);
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) ' ');
            try {
                switch (kind) {
                    case "16MB-content-length" -> {
                        head(out, "/v1/runs/flood/snapshots", "Content-Length: 16000000");
                        for (long sent = 0; sent < 16_000_000; sent += chunk.length) {
                            out.write(chunk, 0, (int) Math.min(chunk.length, 16_000_000 - sent));
                        }
                    }
                    case "20MiB-chunked" -> chunked(out, "/v1/runs/flood/snapshots", chunk, 20L << 20);
                    case "2MiB-chunked-control" -> chunked(out, "/v1/sessions", chunk, 2L << 20);
                    default -> {
                        head(out, "/v1/runs/flood/snapshots", "Content-Length: 1048576");
                        for (int i = 0; i < 15; i++) {
                            out.write(chunk, 0, 4096);
                            out.flush();
                            Thread.sleep(200);
                        }
                        return 0; // abandoned
                    }
                }
                out.flush();
            } catch (IOException refusedWhileSending) {
                // the helper answered and closed while the body was still being sent
            }
            return status(Channels.newInputStream(ch));
        }
    }

    private static void head(OutputStream out, String path, String framing) throws IOException {
        out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Content-Type: application/vnd.spice.snapshot.v1alpha2+json\r\n" + framing + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
    }

    private static void chunked(OutputStream out, String path, byte[] chunk, long total) throws IOException {
        head(out, path, "Transfer-Encoding: chunked");
        String size = Integer.toHexString(chunk.length) + "\r\n";
        for (long sent = 0; sent < total; sent += chunk.length) {
            out.write(size.getBytes(StandardCharsets.US_ASCII));
            out.write(chunk);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    /** The status code of the answer, or -1 when the connection closed without one. */
    private static int status(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            line.append((char) c);
        }
        String[] f = line.toString().split(" ");
        in.readAllBytes();
        return f.length > 1 ? Integer.parseInt(f[1]) : -1;
    }
}
