"""Against the real, packaged helper: every conformance scenario, the README's flow, the import order,
loopback TCP with the endpoint proof, and the same rule IDs as ``spice-authority snapshot validate``.

The helper is the one at ``$SPICE_AUTHORITY_SOCKET`` (``clients/run-suites.sh`` starts it), else one
this module starts from ``src/app/target/quarkus-app/quarkus-run.jar`` (or ``$SPICE_AUTHORITY_JAR``).
Without either the tests are skipped, unless ``SPICE_AUTHORITY_REQUIRE_HELPER=1`` (the Maven build
sets it), where that is a failure.
"""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

from spice_authority import errors as E
from spice_authority import plan as PL
from spice_authority.client import AuthorityClient, RetryPolicy
from spice_authority.conformance import Helper, _java, load_scenarios, run_scenario
from spice_authority.importer import ImportRefused

REPO = Path(__file__).resolve().parents[3]
KIT = Path(os.environ.get("SPICE_SPEC_DIR", REPO / "spec-kit"))
JAR = Path(os.environ.get("SPICE_AUTHORITY_JAR", REPO / "src/app/target/quarkus-app/quarkus-run.jar"))
REQUIRED = os.environ.get("SPICE_AUTHORITY_REQUIRE_HELPER") == "1"

_helper: Helper | None = None
SOCKET = os.environ.get("SPICE_AUTHORITY_SOCKET", "")


def setUpModule() -> None:
    global _helper, SOCKET
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


def corpus(name: str) -> bytes:
    return (KIT / "payload-corpus/public" / name).read_bytes()


def payload_for(run_id: str, name: str = "valid-01-minimal-suspended.json") -> bytes:
    return corpus(name).replace(b'"run_id":"run-1"', b'"run_id":"' + run_id.encode() + b'"')


_counter = [0]


def fresh(prefix: str) -> str:
    _counter[0] += 1
    return f"py-{os.getpid()}-{prefix}-{_counter[0]}"


class ConformanceTest(unittest.TestCase):
    def test_every_scenario_passes(self) -> None:
        scenarios = load_scenarios(KIT / "conformance")
        self.assertGreaterEqual(len(scenarios), 10)
        for file, scenario in scenarios:
            with self.subTest(file):
                r = run_scenario(SOCKET, KIT / "conformance", scenario)
                self.assertTrue(r.passed, f"{r.name}: {r.message}")


    def test_the_runner_reports_a_wrong_expectation_and_refuses_another_format(self) -> None:
        wrong = {"format": "spice-authority-conformance/v1", "name": "wrong", "steps": [
            {"do": "open_session", "session": "A"},
            {"do": "get_run", "run": "ghost", "expect": {"status": 200}}]}
        r = run_scenario(SOCKET, KIT / "conformance", wrong)
        self.assertFalse(r.passed)
        self.assertEqual(r.message, "step 1 (get_run): expected HTTP 200, got HTTP 404 not_found")
        newer = {"format": "spice-authority-conformance/v2", "name": "newer", "steps": []}
        self.assertIn("this runner reads", run_scenario(SOCKET, KIT / "conformance", newer).message)
        unknown = {"format": "spice-authority-conformance/v1", "name": "unknown", "steps": [
            {"do": "authority", "expect": {"status": 200, "headers": {}}}]}
        self.assertIn("no runner checks", run_scenario(SOCKET, KIT / "conformance", unknown).message)


class ClientFlowTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = AuthorityClient.on_socket(SOCKET, retry=RetryPolicy(1, 0.0, 0.0))
        self.a = self.client.open_session()
        self.b = self.client.open_session()

    def tearDown(self) -> None:
        for s in (self.a, self.b):
            try:
                self.client.close_session(s)
            except E.HelperError:
                pass

    def test_the_readme_flow(self) -> None:
        c, run = self.client, fresh("readme")
        self.assertEqual(c.start(self.a, run).phase, "ACTIVE")
        envelope = c.sign(self.a, run, payload_for(run))
        self.assertEqual(c.inspect(envelope)["checks"]["structure"], "ok")
        with self.assertRaises(E.Busy):
            c.prepare_import(self.a, envelope)
        c.release(self.a, run)
        tx = c.prepare_import(self.a, envelope)
        self.assertEqual((tx.run_id, tx.last_sequence, tx.next_sequence), (run, 7, 8))
        self.assertEqual(c.consume(self.a, tx).phase, "IMPORTING")
        v = c.activate(self.a, tx)
        self.assertEqual((v.phase, v.run_generation, v.owned), ("ACTIVE", 2, True))
        with self.assertRaises(E.VerificationFailed):
            c.prepare_import(self.a, envelope)
        self.assertEqual(c.authority().state, "open")
        self.assertIn(run, [r.run_id for r in c.runs()])

    def test_import_order_with_the_plan_check(self) -> None:
        c, run = self.client, fresh("order")
        c.start(self.a, run)
        envelope = c.sign(self.a, run, payload_for(run))
        c.release(self.a, run)
        read = PL.ToolDefinition("read", "Read a fixture.", b"{}", "read_only", "safe", ("filesystem.read",))
        wrong = PL.ToolDefinition("read", "Read another fixture.", b"{}", "read_only", "safe", ("filesystem.read",))
        # A changed plan: refused before consume; the run stays SUSPENDED and importable.
        with self.assertRaises(ImportRefused) as cm:
            with c.import_run(self.b, envelope, check_plan=lambda s, tx: PL.matches(s.plan_identity, [wrong])):
                self.fail("the body must not run")
        self.assertEqual(cm.exception.reason, "PLAN_REFUSED")
        after = c.run(run)
        self.assertEqual((after.phase, after.owned), ("SUSPENDED", False))
        events: list[str] = []
        with c.import_run(self.b, envelope, check_plan=lambda s, tx: PL.matches(s.plan_identity, [read]),
                          commit=lambda s, tx: events.append(f"commit at {tx.next_sequence}") or "run",
                          stop=lambda h: events.append("stop")) as imported:
            self.assertEqual((imported.run.phase, imported.run.run_generation, imported.run.owned), ("ACTIVE", 2, True))
            self.assertEqual(imported.next_sequence, 8)
        self.assertEqual(events, ["commit at 8"])
        self.assertTrue(c.run(run).owned)
        c.release(self.b, run)

    def test_lost_envelope_is_had_again(self) -> None:
        c, run = self.client, fresh("again")
        c.start(self.a, run)
        first = c.sign(self.a, run, payload_for(run))
        self.assertEqual(c.sign(self.b, run, payload_for(run)), first)
        with self.assertRaises(E.InvalidSnapshot) as cm:
            c.sign(self.a, run, payload_for(run).replace(b',"history"', b', "history"'))
        self.assertEqual((cm.exception.status, cm.exception.rule), (422, "P-CANONICAL"))
        c.release(self.a, run)

    def test_bad_run_id_is_refused_here(self) -> None:
        with self.assertRaises(ValueError):
            self.client.start(self.a, "x" * 97)


class ReadmeExampleTest(unittest.TestCase):
    def test_the_python_example_runs_as_written(self) -> None:
        text = (REPO / "clients/README.md").read_text(encoding="utf-8")
        block = text.split("<!-- python-example:begin -->", 1)[1].split("<!-- python-example:end -->", 1)[0]
        code = block.split("```python", 1)[1].rsplit("```", 1)[0]
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "SPICE_AUTHORITY_SOCKET": SOCKET,
                                  "PYTHONPATH": str(REPO / "clients/python")})
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertIn("phase='ACTIVE', run_generation=2, owned=True", lines[0])
        self.assertEqual(lines[1], "continue at sequence 8")

    def test_the_ten_line_example_runs_as_written(self) -> None:
        text = (REPO / "clients/README.md").read_text(encoding="utf-8")
        block = text.split("<!-- python-ten:begin -->", 1)[1].split("<!-- python-ten:end -->", 1)[0]
        code = block.split("```python\n", 1)[1].rsplit("```", 1)[0]
        run = fresh("ten")  # a run ID of its own (the helper is shared): in the payload only
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "example.py").write_text(code, encoding="utf-8")
            (Path(d) / "payload.json").write_bytes(payload_for(run))
            out = subprocess.run([sys.executable, str(Path(d) / "example.py"), SOCKET, str(Path(d) / "payload.json")],
                                 capture_output=True, text=True, timeout=60,
                                 env={**os.environ, "PYTHONPATH": str(REPO / "clients/python")})
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "ACTIVE continue at 8\n")
        self.assertEqual(AuthorityClient.on_socket(SOCKET).run(run).phase, "ACTIVE")


@unittest.skipUnless(JAR.is_file(), "needs the packaged helper's jar")
class TcpAndCliTest(unittest.TestCase):
    def test_loopback_tcp_with_the_endpoint_proof(self) -> None:
        with Helper(str(JAR), tcp=True) as h:
            c = AuthorityClient.on_tcp("127.0.0.1", h.port, h.token_file)
            s = c.open_session()
            run = fresh("tcp")
            self.assertEqual(c.start(s, run).owned, True)
            self.assertEqual(c.authority().endpoint, f"http://127.0.0.1:{h.port}")
            c.close_session(s)
            # A wrong token file: the real helper's proof does not verify under it; nothing is sent.
            other = Path(h.dir, "other")
            other.mkdir(mode=0o700)
            (other / "token").write_bytes(b"0" * 64)
            os.chmod(other / "token", 0o600)
            with self.assertRaises(E.HelperUntrusted):
                AuthorityClient.on_tcp("127.0.0.1", h.port, str(other / "token")).authority()
            # Every scenario over TCP too: each request proves the endpoint, then carries the token.
            where = f"tcp:127.0.0.1:{h.port}:{h.token_file}"
            for file, scenario in load_scenarios(KIT / "conformance"):
                with self.subTest(file):
                    r = run_scenario(where, KIT / "conformance", scenario)
                    self.assertTrue(r.passed, f"{r.name} over TCP: {r.message}")

    def test_same_rules_as_snapshot_validate(self) -> None:
        files = sorted(str(p) for p in (KIT / "payload-corpus/public").glob("*.json") if p.name != "index.json")
        files += sorted(str(p) for p in (KIT / "conformance/payloads").glob("*.json"))
        self.compare_with_the_cli(files)

    def test_same_rules_as_snapshot_validate_on_seeded_mutations(self) -> None:
        import mutate
        with tempfile.TemporaryDirectory() as d:
            files = [str(f) for f in mutate.write_cases(KIT, Path(d), 1000, seed=20261202)]
            self.compare_with_the_cli(files)

    def test_same_rules_as_snapshot_validate_on_version_order_cases(self) -> None:
        import mutate
        cases = mutate.version_cases((KIT / "payload-corpus/public/valid-01-minimal-suspended.json").read_bytes())
        self.assertEqual(len(set(cases)), len(cases), "every case is an edit of its own")
        with tempfile.TemporaryDirectory() as d:
            files = []
            for i, b in enumerate(cases):
                f = Path(d) / f"v{i:03d}.json"
                f.write_bytes(b)
                files.append(str(f))
            self.compare_with_the_cli(files)

    def compare_with_the_cli(self, files: list[str]) -> None:
        out = subprocess.run([_java(), "-jar", str(JAR), "snapshot", "validate", *files], capture_output=True,
                             text=True, timeout=120)
        java: dict[str, Any] = {}
        for line in out.stdout.splitlines():
            name, _, rest = line.partition(": ")
            words = rest.split()
            java[name] = None if words[0] == "OK" else words[1]
        from spice_authority.payload import validate
        self.assertEqual(len(java), len(files))
        differ = [(f, java[f], validate(Path(f).read_bytes())) for f in files]
        differ = [d for d in differ if d[1] != d[2]]
        # snapshot validate accepts v1alpha2 and v1alpha3; the Python client reads v1alpha2 only and
        # names P-VERSION where Java goes on to check a v1alpha3 payload (or accepts it). The seeds are
        # v1alpha2 and no mutation writes the v1alpha3 version, so this is empty today; should a case
        # name it, the client may differ only by saying P-VERSION.
        v1alpha3 = [d for d in differ if b"spice.agent.snapshot/v1alpha3" in Path(d[0]).read_bytes()]
        self.assertEqual([d for d in v1alpha3 if d[2] != "P-VERSION"], [], "(file, snapshot validate, Python)")
        differ = [d for d in differ if d not in v1alpha3]
        self.assertEqual(differ, [], "(file, snapshot validate, Python)")


if __name__ == "__main__":
    unittest.main()
