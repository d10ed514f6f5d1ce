#!/usr/bin/env bash
# Compares app-images on the durable suspend, interleaved, so that the machine's drift (other
# work, page cache, thermal) falls on every image alike. Builds nothing; needs the benchmarks jar
# (./mvnw -B -q package -DskipTests builds bench/target/benchmarks.jar).
#
#   bench/interleave.sh [--rounds N] [--reps N] [--base DIR] IMAGE_DIR [IMAGE_DIR...]
#
# --base DIR puts each run's files (the authority directory, the bare writes, SQLite) under DIR
# instead of java.io.tmpdir: a tmpfs there (/dev/shm) takes the disk out of the comparison and leaves
# what the helper's CPU and JIT cost, the part a JIT or code change moves.
#
# Each round runs SuspendSideBySide once per image, in the order given (--reps N bare writes and
# SQLite puts around each run; default 100). Prints one line per run (cold and warm medians, the
# bare write of the same run, the helper's CPU in the cold window), then per image the median over
# the rounds, with the range. On this project's 2-core VM the run medians spread by about 30%
# from run to run: compare medians over 5 or more rounds, never two single runs.
set -euo pipefail

ROUNDS=5
REPS=100
BASE=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --base) [[ -d "${2:-}" ]] || { echo "bench/interleave.sh: --base needs an existing directory" >&2; exit 2; }; BASE=(--base "$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    --*) echo "bench/interleave.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: bench/interleave.sh [--rounds N] [--reps N] [--base DIR] IMAGE_DIR [IMAGE_DIR...]" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench/interleave.sh: --rounds and --reps need positive integers" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
JAR="$ROOT/bench/target/benchmarks.jar"
[[ -f "$JAR" ]] || { echo "bench/interleave.sh: no $JAR (run ./mvnw -B -q package -DskipTests first)" >&2; exit 2; }
IMAGES=()
for i in "$@"; do
  [[ -x "$i/bin/spice-authority" ]] || { echo "bench/interleave.sh: $i is not an app-image (no bin/spice-authority)" >&2; exit 2; }
  IMAGES+=("$(cd "$i" && pwd)")
done

OUT="$(mktemp /tmp/spice-interleave.XXXXXX)"
trap 'rm -f "$OUT"' EXIT
echo "machine: $(nproc) cpus, $(uptime | sed 's/.*load average/load average/'); $ROUNDS rounds of ${#IMAGES[@]} images"
for r in $(seq 1 "$ROUNDS"); do
  for n in "${!IMAGES[@]}"; do
    run="$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$JAR" spice.authority.bench.SuspendSideBySide \
      --reps "$REPS" ${BASE[@]+"${BASE[@]}"} "${IMAGES[$n]}" 2>&1)" || { echo "$run" >&2; echo "bench/interleave.sh: the run of ${IMAGES[$n]} failed" >&2; exit 1; }
    cold=$(awk '/helper suspend, cold/ { print $(NF-2) }' <<<"$run")
    warm=$(awk '/helper suspend, warm/ { print $(NF-2) }' <<<"$run")
    bare=$(awk '/bare durable write/ { print $(NF-2) }' <<<"$run")
    cpu=$(grep -A1 'cold window' <<<"$run" | tail -1 | sed -E 's/.*executor-thread=([0-9]+)ms.*vert.x-eventloo=([0-9]+)ms.*/\1 \2/' \
      | awk 'NF == 2 { print $1 + $2 } NF != 2 { print "-" }')
    printf 'round %d  image %d  cold %s ms  warm %s ms  bare %s ms  cold-window CPU %s ms\n' "$r" "$((n + 1))" "$cold" "$warm" "$bare" "$cpu"
    printf '%d %s %s %s %s\n' "$n" "$cold" "$warm" "$bare" "$cpu" >> "$OUT"
  done
done
echo
for n in "${!IMAGES[@]}"; do
  python3 - "$OUT" "$n" "${IMAGES[$n]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.split()[0] == sys.argv[2]]
def col(i, digits=3):
    v = [float(r[i]) for r in rows if r[i] not in ("-", "")]
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})" if v else "-"
print(f"image {int(sys.argv[2]) + 1}: {sys.argv[3]}")
print(f"  cold {col(1)} ms, warm {col(2)} ms, bare write {col(3)} ms, cold-window CPU {col(4, 0)} ms")
PY
done
