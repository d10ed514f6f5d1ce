#!/usr/bin/env bash
# Start-up of the app-image against the JVM floor. Builds nothing of the project (it compiles the
# one-file floor program BareUnixHttp.java into a temporary directory with javac).
#
#   bench/startup.sh [--runs N] [--idle SECONDS] [--jvm-options "OPTS"] APP_IMAGE_DIR
#
# APP_IMAGE_DIR is the app-image (e.g. src/app/target/app-image/spice-authority, or an installed
# copy). Measures, interleaved in one run, N times each (default 7):
#   bare      the JDK's java running BareUnixHttp (binds a Unix socket, answers one request)
#   aot       APP_IMAGE_DIR/bin/spice-authority serve, as shipped (with its AOT cache)
#   no-aot    the same app-image with the -XX:AOTCache line removed from its launcher .cfg
#             (a temporary copy; the runtime's default CDS archive still applies)
# Time: from just before exec to the first 200 answer of GET /q/health/live over the Unix socket
# (the client polls connect() every 0.5 ms). RSS: VmRSS of the process right after that answer.
# --idle S also reads VmRSS S seconds after that answer, the process left idle (column "idle MiB";
# each run then takes S seconds longer).
# --jvm-options adds options to both app-image variants through JAVA_TOOL_OPTIONS (the launcher's
# own .cfg options come after them and win where they overlap).
# Prints medians and the ratio to the floor. Run it on a quiet machine (see 'uptime').
set -euo pipefail

RUNS=7
IDLE=0
EXTRA=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --idle) IDLE="$2"; shift 2 ;;
    --jvm-options) EXTRA="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[[ $# -eq 1 ]] || { echo "usage: bench/startup.sh [--runs N] [--idle SECONDS] [--jvm-options OPTS] APP_IMAGE_DIR" >&2; exit 2; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ && "$IDLE" =~ ^[0-9]+$ ]] || { echo "bench/startup.sh: --runs needs a positive integer, --idle a whole number of seconds" >&2; exit 2; }
IMAGE="$(cd "$1" && pwd)"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
LAUNCHER_NAME="$(basename "$IMAGE")"
CFG="$IMAGE/lib/app/$LAUNCHER_NAME.cfg"
[[ -x "$IMAGE/bin/$LAUNCHER_NAME" && -f "$CFG" ]] || { echo "bench/startup.sh: $IMAGE is not an app-image (no bin/$LAUNCHER_NAME or $CFG)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/startup.sh: needs python3 (the timing client)" >&2; exit 2; }

WORK="$(mktemp -d /tmp/spice-startup.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
chmod 700 "$WORK"

"$JAVA_HOME/bin/javac" -d "$WORK/bare" "$ROOT/bench/src/main/java/spice/authority/bench/BareUnixHttp.java"

# The no-AOT copy: same files and modification times, launcher .cfg without the AOTCache option.
cp -a "$IMAGE" "$WORK/noaot"
grep -v -- '-XX:AOTCache=' "$CFG" > "$WORK/noaot/lib/app/$LAUNCHER_NAME.cfg"
grep -q -- '-XX:AOTCache=' "$CFG" || echo "bench/startup.sh: note: $CFG has no -XX:AOTCache option; 'aot' and 'no-aot' are the same" >&2

echo "machine: $(nproc) cpus, $(uptime | sed 's/.*load average/load average/')"
echo "image:   $IMAGE ($(du -sh "$IMAGE" | cut -f1))"
[[ -n "$EXTRA" ]] && echo "extra JVM options (JAVA_TOOL_OPTIONS): $EXTRA"

python3 - "$RUNS" "$WORK" "$JAVA_HOME/bin/java" "$IMAGE/bin/$LAUNCHER_NAME" "$WORK/noaot/bin/$LAUNCHER_NAME" "$EXTRA" "$IDLE" <<'PY'
import os, signal, socket, statistics, subprocess, sys, time

runs, work, java, aot, noaot, extra = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
idle = int(sys.argv[7])

def helper(launcher, name):
    sock = f"{work}/{name}-ep/authority.sock"
    return [launcher, "serve", "--authority-dir", f"{work}/{name}-authority", "--socket", sock], sock

variants = {}
variants["bare"] = ([java, "-cp", f"{work}/bare", "spice.authority.bench.BareUnixHttp", f"{work}/bare.sock"], f"{work}/bare.sock", None)
env = dict(os.environ)
env.pop("JAVA_TOOL_OPTIONS", None)
if extra:
    env["JAVA_TOOL_OPTIONS"] = extra
for name, launcher in (("aot", aot), ("no-aot", noaot)):
    cmd, sock = helper(launcher, name)
    variants[name] = (cmd, sock, env)

REQUEST = b"GET /q/health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

def ask(sock):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock)
        s.sendall(REQUEST)
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep and b"UP" in body:
                break
        return data.startswith(b"HTTP/1.1 200")
    finally:
        s.close()

def vmrss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

def once(cmd, sock, env):
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        while True:
            if p.poll() is not None:
                raise SystemExit(f"{cmd[0]} exited with {p.returncode}: {p.stderr.read().decode(errors='replace')[-2000:]}")
            try:
                if ask(sock):
                    break
            except (FileNotFoundError, ConnectionRefusedError):
                pass
            if time.perf_counter_ns() - t0 > 120e9:
                raise SystemExit(f"{cmd[0]}: no answer within 120 s")
            time.sleep(0.0005)
        ms = (time.perf_counter_ns() - t0) / 1e6
        rss = vmrss(p.pid)
        idle_rss = 0.0
        if idle:
            time.sleep(idle)
            idle_rss = vmrss(p.pid)
        return ms, rss, idle_rss
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stderr.close()

# One unmeasured run each: creates the authority directories, warms the page cache.
for name, (cmd, sock, env) in variants.items():
    once(cmd, sock, env)
results = {name: [] for name in variants}
for i in range(runs):
    for name, (cmd, sock, env) in variants.items():
        results[name].append(once(cmd, sock, env))

floor = statistics.median(t for t, _, _ in results["bare"])
idle_head = f" {'idle MiB':>9}" if idle else ""
print(f"{'variant':8} {'median ms':>10} {'x floor':>8} {'RSS MiB':>8}{idle_head}   runs (ms)")
for name, rs in results.items():
    med = statistics.median(t for t, _, _ in rs)
    rss = statistics.median(r for _, r, _ in rs)
    idle_col = f" {statistics.median(i for _, _, i in rs):9.1f}" if idle else ""
    print(f"{name:8} {med:10.0f} {med / floor:8.2f} {rss:8.1f}{idle_col}   {' '.join(f'{t:.0f}' for t, _, _ in rs)}")
PY
