#!/usr/bin/env bash
# AOT training run of the app-image (Maven profile 'app-image', phase package).
#
#   train.sh APP_IMAGE_DIR CACHE_FILE PAYLOAD
#
# APP_IMAGE_DIR is the image's root: spice-authority/ on Linux (launcher bin/spice-authority,
# Netty's epoll library in lib/app/native), spice-authority.app/ on macOS (launcher
# Contents/MacOS/spice-authority, Netty's kqueue library in Contents/app/native). The Maven
# profile runs it on Linux only; on macOS it has never run.
#
# Starts APP_IMAGE_DIR/bin/spice-authority serve with -XX:AOTCacheOutput=CACHE_FILE on a throw-away
# authority directory and drives a representative mix over the Unix socket: health, a session, a
# run start, a suspended snapshot, an import (prepare, consume, activate), the authority view,
# metrics; then SIGTERM. The JVM writes the AOT cache as it exits. The launcher itself is trained,
# so the cache matches the launcher's class path, runtime and JVM options. On the way it checks the
# image: Netty's native library comes from the image, no /tmp/hsperfdata file, and (with
# $JAVA_HOME/bin/jcmd) none of our methods exceeds the launcher's JIT memory cap.
set -euo pipefail

IMAGE="$1"
CACHE="$2"
PAYLOAD="$3"
case "$(uname -s)" in
  Darwin)
    LAUNCHER="$IMAGE/Contents/MacOS/spice-authority"
    NETTY_LIB="Contents/app/native/libnetty_transport_native_kqueue"
    ;;
  *)
    LAUNCHER="$IMAGE/bin/spice-authority"
    NETTY_LIB="lib/app/native/libnetty_transport_native_epoll"
    ;;
esac
[[ -x "$LAUNCHER" ]] || { echo "train.sh: no launcher at $LAUNCHER" >&2; exit 1; }
command -v curl >/dev/null || { echo "train.sh: curl is needed for the training run" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/spice-aot-train.XXXXXX")"
# The authority directory's ancestry must hold no symbolic link ($TMPDIR lies under /var, a link
# to /private/var, on macOS).
WORK="$(cd -P "$WORK" && pwd -P)"
HELPER=
cleanup() {
  if [[ -n "$HELPER" ]] && kill -0 "$HELPER" 2>/dev/null; then
    kill -KILL "$HELPER" 2>/dev/null || true
    wait "$HELPER" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
chmod 700 "$WORK"
S="$WORK/endpoint/authority.sock"
rm -f "$CACHE"

# The JIT's compile commands (-XX:CompileCommandFile=$APPDIR/spice-authority.jit): the JVM ignores a
# missing file without a word, and reports a line it cannot parse only on standard output. Every
# command of the image's file must parse (lines that are neither blank nor comments).
APPDIR="$(dirname "$CACHE")"
JIT="$APPDIR/spice-authority.jit"
case "$(uname -s)" in
  Darwin) RUNTIME_JAVA="$IMAGE/Contents/runtime/Contents/Home/bin/java" ;;
  *) RUNTIME_JAVA="$IMAGE/lib/runtime/bin/java" ;;
esac
if grep -q 'CompileCommandFile=\$APPDIR/spice-authority.jit' "$APPDIR/spice-authority.cfg" 2>/dev/null; then
  [[ -r "$JIT" ]] || { echo "train.sh: the launcher names $JIT, which is not in the image" >&2; exit 1; }
  WANT=$(grep -cvE '^[[:space:]]*(#|$)' "$JIT" || true)
  if ! PARSED=$("$RUNTIME_JAVA" -XX:CompileCommandFile="$JIT" -version 2>&1); then
    echo "$PARSED" >&2
    echo "train.sh: the JVM refuses $JIT" >&2
    exit 1
  fi
  GOT=$(grep -c '^CompileCommand: ' <<< "$PARSED" || true)
  if [[ "$WANT" -eq 0 || "$GOT" -ne "$WANT" ]] || grep -qi 'error' <<< "$PARSED"; then
    echo "$PARSED" >&2
    echo "train.sh: $JIT has $WANT commands, the JVM accepted $GOT" >&2
    exit 1
  fi
fi

# JAVA_TOOL_OPTIONS reaches the JVM the launcher creates (the launcher's own options come from its
# .cfg file and stay as shipped).
# -AOTRecordTraining: the cache holds the loaded and linked classes, not the method profiles of the
# training run (JEP 515). Only C2 uses such profiles, and the launcher runs C1 alone
# (-XX:TieredStopAtLevel=1); the JVM maps the whole cache, so they cost ~1 MiB of RSS on every start
# for nothing (bench/RESULTS.md, session 8).
JAVA_TOOL_OPTIONS="-XX:+UnlockDiagnosticVMOptions -XX:-AOTRecordTraining -XX:AOTCacheOutput=$CACHE -Xlog:aot=warning,cds=warning" \
  "$LAUNCHER" serve --authority-dir "$WORK/authority" --socket "$S" > "$WORK/serve.out" 2> "$WORK/serve.err" &
HELPER=$!

for _ in $(seq 1 600); do
  grep -q '^listening on' "$WORK/serve.out" 2>/dev/null && break
  kill -0 "$HELPER" 2>/dev/null || { cat "$WORK/serve.err" >&2; echo "train.sh: helper exited" >&2; exit 1; }
  sleep 0.1
done
grep -q '^listening on' "$WORK/serve.out" || { echo "train.sh: helper did not start" >&2; exit 1; }

c() { curl -sS --fail-with-body --unix-socket "$S" "$@"; }
c http://localhost/q/health/live > /dev/null
# The files the helper has mapped: /proc/PID/maps on Linux; lsof's name fields on macOS (no /proc).
mapped() {
  if [[ -r "/proc/$HELPER/maps" ]]; then
    cat "/proc/$HELPER/maps"
  else
    { lsof -n -P -p "$HELPER" -Fn 2>/dev/null || true; } | sed -n 's/^n//p'
  fi
}
MAPPED="$(mapped)"
# Netty's native library (epoll on Linux, kqueue on macOS) must come from the image, not from a copy
# in java.io.tmpdir (Linux shows such a copy as deleted; any libnetty elsewhere is one).
NATIVE="$(cd -P "$IMAGE" && pwd -P)/$NETTY_LIB"
if ! grep -q -- "$NATIVE" <<< "$MAPPED" || grep -q 'libnetty.*(deleted)' <<< "$MAPPED" \
    || grep 'libnetty' <<< "$MAPPED" | grep -qv -- "$NATIVE"; then
  echo "train.sh: the helper did not load Netty's native library from $IMAGE/${NETTY_LIB%/*}" >&2
  exit 1
fi
# The JVM must not publish a performance-counter file in the temporary directory (-XX:-UsePerfData).
if grep -q 'hsperfdata' <<< "$MAPPED"; then
  echo "train.sh: the helper maps an hsperfdata file (the launcher lacks -XX:-UsePerfData)" >&2
  exit 1
fi
c http://localhost/q/health/ready > /dev/null
SESSION=$(c -X POST -H 'Content-Type: application/json' -d "{\"pid\": $$}" http://localhost/v1/sessions \
  | sed -E 's/.*"session":"([0-9a-f]+)".*/\1/')
c -X POST -H "Spice-Session: $SESSION" -H 'Content-Type: application/json' -d '{"run_id":"run-1"}' http://localhost/v1/runs > /dev/null
c -X POST -H "Spice-Session: $SESSION" -H 'Content-Type: application/vnd.spice.snapshot.v1alpha2+json' \
  --data-binary @"$PAYLOAD" -o "$WORK/run-1.pb" http://localhost/v1/runs/run-1/snapshots
c http://localhost/v1/runs/run-1 > /dev/null
c -X POST -H 'Content-Type: application/x-protobuf' --data-binary @"$WORK/run-1.pb" http://localhost/v1/snapshots/inspect > /dev/null
# Refusals are part of the mix too (problem+json bodies): busy while this session owns the run.
curl -sS --unix-socket "$S" -X POST -H "Spice-Session: $SESSION" -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$WORK/run-1.pb" http://localhost/v1/imports > /dev/null
c -X DELETE -H "Spice-Session: $SESSION" http://localhost/v1/runs/run-1/lease
IMPORT=$(c -X POST -H "Spice-Session: $SESSION" -H 'Content-Type: application/x-protobuf' --data-binary @"$WORK/run-1.pb" \
  http://localhost/v1/imports | sed -E 's/.*"import":"([0-9a-f]+)".*/\1/')
c -X POST -H "Spice-Session: $SESSION" "http://localhost/v1/imports/$IMPORT/consume" > /dev/null
c -X POST -H "Spice-Session: $SESSION" "http://localhost/v1/imports/$IMPORT/activate" > /dev/null
c http://localhost/v1/runs > /dev/null
c http://localhost/v1/authority > /dev/null
c http://localhost/q/metrics > /dev/null
c -X DELETE "http://localhost/v1/sessions/$SESSION"

# No method the training mix compiled may exceed the launcher's per-compilation memory cap
# (-XX:CompileCommand=MemLimit, src/app/pom.xml): C1 would give up on it and it would stay
# interpreted. Only the start-up-only code (the ClassFile API, Quarkus's runtime) is capped on purpose.
JCMD="${JAVA_HOME:-}/bin/jcmd"
if [[ -x "$JCMD" ]]; then
  OVER=$("$JCMD" "$HELPER" Compiler.memory 2>&1 | grep -E ' oom ' | grep -vE ' (jdk/internal/classfile|io/quarkus/runtime)/' || true)
  if [[ -n "$OVER" ]]; then
    echo "train.sh: methods exceed the JIT memory cap and stay interpreted:" >&2
    echo "$OVER" >&2
    exit 1
  fi
else
  echo "train.sh: warning: no jcmd in JAVA_HOME; the JIT memory cap is not checked" >&2
fi

kill -TERM "$HELPER"
set +e
wait "$HELPER"
code=$?
set -e
HELPER=
if [[ $code -ne 0 ]]; then
  cat "$WORK/serve.err" >&2
  echo "train.sh: helper exited with $code" >&2
  exit 1
fi
[[ -s "$CACHE" ]] || { cat "$WORK/serve.err" >&2; echo "train.sh: no AOT cache written to $CACHE" >&2; exit 1; }
echo "train.sh: AOT cache $CACHE ($(du -h "$CACHE" | cut -f1))"
