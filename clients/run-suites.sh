#!/usr/bin/env bash
# Runs the host-client suites against the packaged helper (src/app/target/quarkus-app/quarkus-run.jar):
#   1. starts one helper on a Unix socket in a temporary directory,
#   2. Python: python3 -m unittest (clients/python/tests; the real-helper tests use this helper, and
#      test_cross_language.py runs the Python <-> TypeScript SIGKILL recovery, which needs node),
#      then the conformance runner over every spec-kit/conformance scenario,
#   3. Node: node --test clients/typescript/test/ (when that folder has tests),
#   4. stops the helper and removes the directory (also on failure or interrupt).
# Run by the Maven module clients in its integration-test phase (./mvnw -B verify), or by hand from
# the repository root after `./mvnw -B -q package -DskipTests -pl src/app -am`.
# Environment seen by the suites: SPICE_AUTHORITY_SOCKET (the helper's socket), SPICE_AUTHORITY_JAR,
# SPICE_SPEC_DIR (spec-kit/), SPICE_AUTHORITY_REQUIRE_HELPER=1 (no skipping for want of a helper).
# A missing python3 (3.11+), node or java is a failure that names it, never a silent skip.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
JAR=${SPICE_AUTHORITY_JAR:-$ROOT/src/app/target/quarkus-app/quarkus-run.jar}

fail() { echo "run-suites: $*" >&2; exit 1; }

missing=()
if ! command -v python3 >/dev/null 2>&1; then
  missing+=("python3 (3.11 or later, for the Python client suite)")
elif ! python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  missing+=("python3 3.11 or later (found $(python3 --version 2>&1), for the Python client suite)")
fi
if [[ -d clients/typescript ]] && ! command -v node >/dev/null 2>&1; then
  missing+=("node (for the TypeScript client suite in clients/typescript)")
fi
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
  JAVA="$JAVA_HOME/bin/java"
elif command -v java >/dev/null 2>&1; then
  JAVA=$(command -v java)
else
  missing+=("java (a JDK 25 to run the packaged helper, or set JAVA_HOME)")
fi
if (( ${#missing[@]} )); then
  fail "missing: $(printf '%s; ' "${missing[@]}")install it or put it on the PATH"
fi
[[ -f "$JAR" ]] || fail "no packaged helper at $JAR (build it: ./mvnw -B package -DskipTests -pl src/app -am)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/spice-suites.XXXXXX")
chmod 700 "$WORK"
HELPER=""
cleanup() {
  if [[ -n "$HELPER" ]] && kill -0 "$HELPER" 2>/dev/null; then
    kill -TERM "$HELPER" 2>/dev/null || true
    wait "$HELPER" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SOCKET="$WORK/endpoint/authority.sock"
"$JAVA" -jar "$JAR" serve --authority-dir "$WORK/authority" --socket "$SOCKET" > "$WORK/serve.log" 2>&1 &
HELPER=$!
deadline=$((SECONDS + 60))
until grep -q '^listening on' "$WORK/serve.log" 2>/dev/null; do
  if ! kill -0 "$HELPER" 2>/dev/null; then cat "$WORK/serve.log" >&2; fail "the helper exited before listening"; fi
  if (( SECONDS > deadline )); then cat "$WORK/serve.log" >&2; fail "the helper did not listen within 60 s"; fi
  sleep 0.2  # a poll with a deadline, for the JVM to start
done
echo "run-suites: helper pid $HELPER on unix:$SOCKET"

export SPICE_AUTHORITY_SOCKET="$SOCKET" SPICE_AUTHORITY_JAR="$JAR" SPICE_SPEC_DIR="$ROOT/spec-kit"
export SPICE_AUTHORITY_REQUIRE_HELPER=1 PYTHONDONTWRITEBYTECODE=1

echo "run-suites: Python client (python3 -m unittest)"
(cd clients/python && python3 -m unittest discover -s tests)
echo "run-suites: conformance scenarios (Python runner)"
(cd clients/python && python3 -m spice_authority.conformance --socket "$SOCKET")

# Node: the TypeScript client's suite, when it has one.
if [[ -d clients/typescript/test ]]; then
  # The TypeScript compiler is the client's one dev dependency: it checks index.d.ts (types.test.js).
  if [[ ! -x clients/typescript/node_modules/.bin/tsc ]]; then
    echo "run-suites: npm ci in clients/typescript (the TypeScript compiler, a dev dependency, for the type check)"
    if ! npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error; then
      echo "run-suites: npm ci failed in clients/typescript: the type check needs the npm registry once (or node_modules from an earlier npm ci)" >&2
      exit 1
    fi
  fi
  echo "run-suites: TypeScript client (node --test)"
  SPICE_AUTHORITY_REQUIRE_TSC=1 node --test clients/typescript/test/
fi

echo "run-suites: all suites passed"
