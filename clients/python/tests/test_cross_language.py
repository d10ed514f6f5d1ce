"""Cross-language recovery against the real helper: a host of one language suspends a run at a
completed turn and dies of SIGKILL still holding it; a host of the other language imports the
envelope (handed over as a file) and completes the run. Both directions: Python to TypeScript and
TypeScript to Python (``clients/python/testing/recovery_host.py``, ``clients/typescript/testing/
recovery-host.js``, the same scripted agent).

Checked: the first host holds the run (an import is busy) until it is killed; it died of SIGKILL;
the importer resumes at the envelope's last sequence + 1; the run ends COMPLETED at the helper; each
mutating tool call ran exactly once (the fsynced ledger: turn 1 by the first host, turns 2 and 3 by
the importer); the envelope never imports again.

The helper is ``$SPICE_AUTHORITY_SOCKET`` (``clients/run-suites.sh``), else one started from the
packaged jar. Without a helper or without ``node`` the tests are skipped, unless
``SPICE_AUTHORITY_REQUIRE_HELPER=1`` (the Maven build), where that is a failure.
"""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from spice_authority import errors as E
from spice_authority.client import AuthorityClient, RetryPolicy
from spice_authority.conformance import Helper

REPO = Path(__file__).resolve().parents[3]
JAR = Path(os.environ.get("SPICE_AUTHORITY_JAR", REPO / "src/app/target/quarkus-app/quarkus-run.jar"))
REQUIRED = os.environ.get("SPICE_AUTHORITY_REQUIRE_HELPER") == "1"
NODE = shutil.which("node")
HOSTS = {
    "python": [sys.executable, str(REPO / "clients/python/testing/recovery_host.py")],
    "typescript": [NODE or "node", str(REPO / "clients/typescript/testing/recovery-host.js")],
}
DEADLINE = 60.0  # seconds for a host to start and suspend, or to import and complete (JVM-free: ~1 s)

_helper: Helper | None = None
SOCKET = os.environ.get("SPICE_AUTHORITY_SOCKET", "")


def setUpModule() -> None:
    global _helper, SOCKET
    if NODE is None:
        if REQUIRED:
            raise RuntimeError("node is not on the PATH: the cross-language recovery test needs it")
        raise unittest.SkipTest("node is not on the PATH")
    if SOCKET:
        return
    if not JAR.is_file():
        if REQUIRED:
            raise RuntimeError(f"no packaged helper at {JAR} and no SPICE_AUTHORITY_SOCKET (build src/app first)")
        raise unittest.SkipTest(f"no packaged helper at {JAR}")
    _helper = Helper(str(JAR)).__enter__()
    SOCKET = _helper.socket


def tearDownModule() -> None:
    if _helper is not None:
        _helper.__exit__(None, None, None)


def _first_line(proc: subprocess.Popen[bytes], deadline: float) -> str | None:
    """The first line the process writes, waited for until ``deadline`` (None: none by then)."""
    lines: queue.Queue[bytes] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        return lines.get(timeout=max(0.0, deadline - time.monotonic())).decode().rstrip("\n")
    except queue.Empty:
        return None


class CrossLanguageRecoveryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="spice-xlang-"))
        os.chmod(self.dir, 0o700)
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.client = AuthorityClient.on_socket(SOCKET, retry=RetryPolicy(1, 0.0, 0.0))
        self.session = self.client.open_session()
        self.addCleanup(self._close_session)

    def _close_session(self) -> None:
        try:
            self.client.close_session(self.session)
        except E.HelperError:
            pass

    def _host(self, lang: str, role: str, run_id: str) -> list[str]:
        return HOSTS[lang] + ["--socket", SOCKET, "--role", role, "--run-id", run_id,
                              "--envelope", str(self.dir / "envelope.bin"), "--ledger", str(self.dir / "ledger")]

    def recover(self, first_lang: str, import_lang: str) -> None:
        run_id = f"xlang-{first_lang[:2]}-{import_lang[:2]}-{os.getpid()}-{time.monotonic_ns()}"
        envelope_file, ledger = self.dir / "envelope.bin", self.dir / "ledger"

        # 1. The first host starts the run, runs turn 1, suspends and waits, holding the run.
        with open(self.dir / "first.err", "wb") as err:
            first = subprocess.Popen(self._host(first_lang, "first", run_id), stdout=subprocess.PIPE, stderr=err)
        self.addCleanup(self._reap, first)
        line = _first_line(first, time.monotonic() + DEADLINE)
        self.assertEqual(line, f"suspended {run_id} 4",
                         f"{first_lang} host: {(self.dir / 'first.err').read_text(errors='replace')}")
        envelope = envelope_file.read_bytes()
        run = self.client.run(run_id)
        self.assertEqual((run.phase, run.run_generation, run.owned), ("SUSPENDED", 1, True))
        with self.assertRaises(E.Busy):  # the first owner lives: nobody imports the run
            self.client.prepare_import(self.session, envelope)

        # 2. SIGKILL: no release, no goodbye.
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        self.assertEqual(first.returncode, -signal.SIGKILL, f"the {first_lang} host did not die of SIGKILL")

        # 3. A host of the other language imports the envelope file and completes the run.
        done = subprocess.run(self._host(import_lang, "import", run_id), capture_output=True, timeout=DEADLINE)
        self.assertEqual(done.returncode, 0, f"{import_lang} importer: {done.stderr.decode(errors='replace')}")
        out = json.loads(done.stdout.decode().strip().splitlines()[-1])
        self.assertEqual(out["run_id"], run_id)
        self.assertEqual(out["imported_last_sequence"], 4)
        self.assertEqual(out["resumed_at"], out["imported_last_sequence"] + 1)
        self.assertEqual((out["final_last_sequence"], out["phase"]), (12, "COMPLETED"))

        # 4. The helper's view, the ledger, and exactly once.
        run = self.client.run(run_id)
        self.assertEqual((run.phase, run.run_generation, run.owned), ("COMPLETED", 2, False))
        entries = [ln.split(" ") for ln in ledger.read_text().splitlines()]
        self.assertEqual([e[:3] for e in entries], [[run_id, "t1-write", first_lang], [run_id, "t2-write", import_lang],
                                                    [run_id, "t3-write", import_lang]], "each mutating call once")
        self.assertEqual(int(entries[0][3]), first.pid)
        self.assertEqual(entries[1][3], entries[2][3])
        self.assertNotEqual(int(entries[1][3]), first.pid)
        with self.assertRaises(E.HelperProblem) as cm:  # the envelope was spent: never a second import
            self.client.prepare_import(self.session, envelope)
        self.assertNotIsInstance(cm.exception, E.Busy)

    @staticmethod
    def _reap(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()

    def test_python_suspends_and_is_killed_typescript_imports_and_completes(self) -> None:
        self.recover("python", "typescript")

    def test_typescript_suspends_and_is_killed_python_imports_and_completes(self) -> None:
        self.recover("typescript", "python")


if __name__ == "__main__":
    unittest.main()
