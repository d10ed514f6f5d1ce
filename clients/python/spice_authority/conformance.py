"""Runs the language-neutral conformance scenarios (``spec-kit/conformance/``) against a real helper.

    python3 -m spice_authority.conformance --socket SOCKET [--kit DIR] [NAME...]
    python3 -m spice_authority.conformance --socket tcp:127.0.0.1:PORT:TOKEN_FILE
    python3 -m spice_authority.conformance --jar src/app/target/quarkus-app/quarkus-run.jar [--tcp]

With ``--socket`` the helper is one already serving there (a socket path, or ``tcp:HOST:PORT:TOKEN_FILE``
for loopback TCP); with ``--jar`` the runner starts one (``java -jar JAR serve --authority-dir D
--socket S``, or ``--listen 127.0.0.1:0 --token-file F`` with ``--tcp``, in a temporary directory)
and stops it after.
Prints ``PASS name`` or ``FAIL name: step N (do): …`` per scenario, then ``N passed, N failed``;
exit 0 only when every scenario passed. The format is described in ``spec-kit/conformance/README.md``.

A scenario's other host processes (``spawn_host``) are this module in agent mode
(``--agent --socket S``): it reads one step per line on standard input and writes its outcome.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from . import errors as E
from .client import AuthorityClient, ImportView, RetryPolicy, Session

FORMAT = "spice-authority-conformance/v1"
MAIN_HOST = "main"
_EXPECT_KEYS = {"status", "code", "rule", "view", "same_as", "differs_from", "listed"}
_RUN_VIEW_OPS = {"start", "resume", "get_run", "abandon", "consume", "activate"}


def default_kit() -> Path:
    """``spec-kit/conformance`` of the repository this package sits in."""
    return Path(__file__).resolve().parents[3] / "spec-kit" / "conformance"


# ---- executing one step (in the runner or in a host agent) -----------------------------------


def client_for(where: str, **options: Any) -> AuthorityClient:
    """A client of ``where``: a socket path, or ``tcp:HOST:PORT:TOKEN_FILE``."""
    if where.startswith("tcp:"):
        host, port, token_file = where[4:].split(":", 2)
        return AuthorityClient.on_tcp(host, int(port), token_file, **options)
    return AuthorityClient.on_socket(where, **options)


class Executor:
    """Makes the calls of one host process; sessions are kept by name. JSON in, JSON out."""

    def __init__(self, socket_path: str) -> None:
        self.last_status = 0
        self.client = client_for(socket_path, retry=RetryPolicy(1, 0.0, 0.0), observer=self._observe)
        self.sessions: dict[str, Session] = {}

    def _observe(self, _method: str, _path: str, status: int) -> None:
        self.last_status = status

    def execute(self, step: dict[str, Any]) -> dict[str, Any]:
        """Runs one resolved step; returns ``{"status", "code"?, "rule"?, "json"?, "envelope"?, "error"?}``."""
        self.last_status = 0
        out: dict[str, Any] = {}
        try:
            value = self._call(step)
            out["status"] = self.last_status
            if isinstance(value, bytes):
                out["envelope"] = base64.b64encode(value).decode("ascii")
            elif value is not None:
                out["json"] = value
        except E.HelperProblem as p:
            out.update(status=p.status, code=p.code)
            if isinstance(p, E.InvalidSnapshot):
                out["rule"] = p.rule
        except (E.HelperTransportError, ValueError, KeyError) as e:
            out.update(status=0, error=f"{type(e).__name__}: {e}")
        return out

    def _session(self, step: dict[str, Any]) -> Session:
        return self.sessions[step["session"]]

    def _call(self, s: dict[str, Any]) -> Any:
        c = self.client
        op = s["do"]
        if op == "open_session":
            self.sessions[s["session"]] = c.open_session()
            return None
        if op == "close_session":
            c.close_session(self._session(s))
            return None
        if op == "authority":
            return dict(c.authority().json)
        if op == "start":
            return dict(c.start(self._session(s), s["run_id"]).json)
        if op == "sign":
            return c.sign(self._session(s), s["run_id"], base64.b64decode(s["payload"]))
        if op == "resume":
            return dict(c.resume(self._session(s), s["run_id"]).json)
        if op == "release":
            c.release(self._session(s), s["run_id"])
            return None
        if op == "get_run":
            return dict(c.run(s["run_id"]).json)
        if op == "list_runs":
            return [dict(v.json) for v in c.runs()]
        if op == "abandon":
            return dict(c.abandon(self._session(s), s["run_id"]).json)
        if op == "prepare_import":
            return dict(c.prepare_import(self._session(s), base64.b64decode(s["envelope"])).json)
        if op in ("consume", "activate", "abort_import"):
            i = s["import"]
            tx = ImportView(i["import"], i["run_id"], i["last_sequence"], i["next_sequence"])
            if op == "abort_import":
                c.abort_import(self._session(s), tx)
                return None
            return dict((c.consume if op == "consume" else c.activate)(self._session(s), tx).json)
        if op == "inspect":
            return dict(c.inspect(base64.b64decode(s["envelope"])))
        raise ValueError(f"unknown step {op!r}")

    def close_all(self) -> None:
        for s in self.sessions.values():
            try:
                self.client.close_session(s)
            except E.HelperError:
                pass
        self.sessions.clear()


def agent_main(socket_path: str) -> int:
    """Agent mode: one JSON step per line in, one JSON outcome per line out, until end of input."""
    ex = Executor(socket_path)
    for line in sys.stdin:
        if not line.strip():
            continue
        step = json.loads(line)
        if step.get("do") == "close_all":
            ex.close_all()
            out: dict[str, Any] = {"status": 0}
        else:
            out = ex.execute(step)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


class _Agent:
    """A host process of this language running :func:`agent_main`."""

    def __init__(self, socket_path: str) -> None:
        env = dict(os.environ)
        pkg_parent = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "spice_authority.conformance", "--agent",
                                      "--socket", socket_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1)

    def execute(self, step: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(step) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            return {"status": 0, "error": "the host process ended"}
        return json.loads(line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()


# ---- running a scenario ----------------------------------------------------------------------


class StepFailed(Exception):
    pass


@dataclass
class Result:
    name: str
    passed: bool
    message: str = ""
    steps: int = 0


@dataclass
class _State:
    prefix: str
    envelopes: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # name -> (bytes, run name)
    imports: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_hosts: dict[str, str] = field(default_factory=dict)
    agents: dict[str, _Agent] = field(default_factory=dict)

    def run_id(self, name: str) -> str:
        rid = f"{self.prefix}-{name}"
        if len(rid.encode()) > 96:
            raise StepFailed(f"run ID {rid!r} is longer than 96 bytes")
        return rid


def _subset(expected: Any, got: Any, path: str = "") -> str | None:
    """None when ``got`` holds ``expected`` (objects member by member, recursively), else why not."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{path or 'answer'}: expected an object, got {json.dumps(got)}"
        for k, v in expected.items():
            if k not in got:
                return f"{path}{k}: missing (expected {json.dumps(v)})"
            why = _subset(v, got[k], f"{path}{k}.")
            if why:
                return why
        return None
    if type(expected) is not type(got) or expected != got:
        return f"{path.rstrip('.') or 'value'}: expected {json.dumps(expected)}, got {json.dumps(got)}"
    return None


#: Members each step needs, by ``do`` (README "Steps").
STEP_MEMBERS: dict[str, tuple[str, ...]] = {
    "open_session": ("session",), "close_session": ("session",), "authority": (), "start": ("session", "run"),
    "sign": ("session", "run", "payload"), "resume": ("session", "run"), "release": ("session", "run"),
    "get_run": ("run",), "list_runs": ("run",), "abandon": ("session", "run"),
    "prepare_import": ("session", "envelope"), "consume": ("session", "import"), "activate": ("session", "import"),
    "abort_import": ("session", "import"), "inspect": ("envelope",), "spawn_host": ("host",),
    "kill_host": ("host",),
}


def check_scenario(kit: Path, scenario: dict[str, Any]) -> list[str]:
    """What is wrong with a scenario file by the format (README), before any helper is asked:
    unknown steps, missing members, payload files that do not exist, names used before they are
    saved or opened, expectations a runner cannot check. Empty when it is well formed."""
    problems: list[str] = []
    if scenario.get("format") != FORMAT:
        problems.append(f"format is {scenario.get('format')!r}, not {FORMAT!r}")
    if not isinstance(scenario.get("name"), str) or not scenario["name"]:
        problems.append("no name")
    steps = scenario.get("steps")
    if not isinstance(steps, list) or not steps:
        return problems + ["no steps"]
    sessions: set[str] = set()
    hosts = {MAIN_HOST}
    saved_envelopes: set[str] = set()
    saved_imports: set[str] = set()
    for i, step in enumerate(steps):
        where = f"step {i}"
        do = step.get("do")
        if do not in STEP_MEMBERS:
            problems.append(f"{where}: unknown step {do!r}")
            continue
        for m in STEP_MEMBERS[do]:
            if m not in step:
                problems.append(f"{where} ({do}): needs {m!r}")
        if do == "spawn_host":
            hosts.add(step.get("host", ""))
        elif do == "kill_host":
            if step.get("host") not in hosts:
                problems.append(f"{where} (kill_host): no host {step.get('host')!r}")
            hosts.discard(step.get("host", ""))
        elif do == "open_session":
            if step.get("host", MAIN_HOST) not in hosts:
                problems.append(f"{where} (open_session): no host {step.get('host')!r}")
            sessions.add(step.get("session", ""))
        elif "session" in step and step["session"] not in sessions:
            problems.append(f"{where} ({do}): session {step['session']!r} was never opened")
        if "payload" in step and not (kit / "payloads" / step["payload"]).is_file():
            problems.append(f"{where} ({do}): no payload file {step['payload']!r}")
        if "envelope" in step and step["envelope"] not in saved_envelopes:
            problems.append(f"{where} ({do}): envelope {step['envelope']!r} is used before it is saved")
        if "import" in step and step["import"] not in saved_imports:
            problems.append(f"{where} ({do}): import {step['import']!r} is used before it is saved")
        expect = step.get("expect")
        if expect is not None:
            unknown = set(expect) - _EXPECT_KEYS
            if unknown:
                problems.append(f"{where} ({do}): expect members no runner checks: {sorted(unknown)}")
            status = expect.get("status")
            if not isinstance(status, int):
                problems.append(f"{where} ({do}): expect needs an integer status")
            elif (status >= 400) != ("code" in expect):
                problems.append(f"{where} ({do}): a code goes with a status of 400 or more, and only there")
            for ref in ("same_as", "differs_from"):
                if ref in expect and expect[ref] not in (saved_envelopes | saved_imports):
                    problems.append(f"{where} ({do}): {ref} names {expect[ref]!r}, which is not saved")
        ok = expect is None or (isinstance(expect.get("status"), int) and expect["status"] < 400)
        if "save" in step and ok:
            (saved_envelopes if do == "sign" else saved_imports).add(step["save"])
    return problems


def load_scenarios(kit: Path, names: list[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for f in sorted((kit / "scenarios").glob("*.json")):
        s = json.loads(f.read_text(encoding="utf-8"))
        if names and s.get("name") not in names and f.stem not in names:
            continue
        out.append((f.name, s))
    return out


def run_scenario(socket_path: str, kit: Path, scenario: dict[str, Any], main: Executor | None = None) -> Result:
    name = str(scenario.get("name", "?"))
    if scenario.get("format") != FORMAT:
        return Result(name, False, f"format is {scenario.get('format')!r}, this runner reads {FORMAT!r}")
    problems = check_scenario(kit, scenario)
    if problems:
        return Result(name, False, "malformed scenario: " + "; ".join(problems))
    st = _State(prefix="c" + secrets.token_hex(4) + "-" + name[:40])
    main = main or Executor(socket_path)
    i = -1
    try:
        for i, step in enumerate(scenario["steps"]):
            _run_step(socket_path, kit, st, main, step)
        return Result(name, True, steps=len(scenario["steps"]))
    except StepFailed as e:
        do = scenario["steps"][i].get("do") if 0 <= i < len(scenario["steps"]) else "?"
        return Result(name, False, f"step {i} ({do}): {e}", steps=i)
    finally:
        for agent in st.agents.values():
            try:
                agent.execute({"do": "close_all"})
            except (OSError, ValueError):
                pass
            agent.kill()
        main.close_all()


def _run_step(socket_path: str, kit: Path, st: _State, main: Executor, step: dict[str, Any]) -> None:
    op = step.get("do")
    expect = step.get("expect")
    if expect is not None:
        unknown = set(expect) - _EXPECT_KEYS
        if unknown:
            raise StepFailed(f"this runner cannot check expect members {sorted(unknown)}")
    if op == "spawn_host":
        st.agents[step["host"]] = _Agent(socket_path)
        return
    if op == "kill_host":
        agent = st.agents.pop(step["host"])
        agent.kill()
        deadline = time.monotonic() + 10
        for run in step.get("await_released", []):
            rid = st.run_id(run)
            pause = 0.02
            while True:
                out = main.execute({"do": "get_run", "run_id": rid})
                if out.get("json", {}).get("owned") is False:
                    break
                if time.monotonic() > deadline:
                    raise StepFailed(f"run {run} still owned 10 s after its host was killed: {out}")
                time.sleep(pause)  # a poll with a deadline, waiting for the helper's exit watcher
                pause = min(pause * 2, 0.1)
        return
    # Resolve names into values.
    call: dict[str, Any] = {"do": op}
    if "session" in step:
        call["session"] = step["session"]
    if "run" in step:
        call["run_id"] = st.run_id(step["run"])
    if "payload" in step:
        raw = (kit / "payloads" / step["payload"]).read_bytes()
        call["payload"] = base64.b64encode(raw.replace(b"${run}", call["run_id"].encode())).decode()
    if "envelope" in step:
        if step["envelope"] not in st.envelopes:
            raise StepFailed(f"no saved envelope {step['envelope']!r}")
        call["envelope"] = base64.b64encode(st.envelopes[step["envelope"]][0]).decode()
    if "import" in step:
        if step["import"] not in st.imports:
            raise StepFailed(f"no saved import {step['import']!r}")
        call["import"] = st.imports[step["import"]]
    # Route to the host that holds the session.
    host = MAIN_HOST
    if op == "open_session":
        host = step.get("host", MAIN_HOST)
        st.session_hosts[step["session"]] = host
    elif "session" in step:
        host = st.session_hosts.get(step["session"], MAIN_HOST)
    if host == MAIN_HOST:
        out = main.execute(call)
    else:
        if host not in st.agents:
            raise StepFailed(f"no host process {host!r} (spawn_host first)")
        out = st.agents[host].execute(call)
    _check(st, step, call, out, expect)


def _check(st: _State, step: dict[str, Any], call: dict[str, Any], out: dict[str, Any],
           expect: dict[str, Any] | None) -> None:
    op = step["do"]
    status = out.get("status", 0)
    if "error" in out:
        raise StepFailed(f"no answer: {out['error']}")
    if expect is None:
        if not 200 <= status < 300:
            raise StepFailed(f"expected success, got HTTP {status} {out.get('code', '')}".rstrip())
        expect = {}
    elif status != expect["status"]:
        raise StepFailed(f"expected HTTP {expect['status']} {expect.get('code', '')}".rstrip()
                         + f", got HTTP {status} {out.get('code', '')}".rstrip())
    if status >= 400:
        if expect.get("code") != out.get("code"):
            raise StepFailed(f"expected code {expect.get('code')!r}, got {out.get('code')!r}")
        if "rule" in expect and expect["rule"] != out.get("rule"):
            raise StepFailed(f"expected rule {expect['rule']!r}, got {out.get('rule')!r}")
        return
    if "code" in expect:
        raise StepFailed("a success cannot have a problem code: the scenario is malformed")
    body = out.get("json")
    # Implicit checks.
    if op in _RUN_VIEW_OPS and "run_id" in call and isinstance(body, dict) and body.get("run_id") != call["run_id"]:
        raise StepFailed(f"answer names run {body.get('run_id')!r}, not {call['run_id']!r}")
    if op == "prepare_import":
        run_name = st.envelopes[step["envelope"]][1]
        if not isinstance(body, dict) or body.get("run_id") != st.run_id(run_name):
            raise StepFailed(f"import of another run: {body}")
    if op == "sign":
        env = base64.b64decode(out.get("envelope", ""))
        if not env:
            raise StepFailed("empty envelope")
        if "same_as" in expect and env != st.envelopes[expect["same_as"]][0]:
            raise StepFailed(f"envelope differs from {expect['same_as']!r}")
        if "differs_from" in expect and env == st.envelopes[expect["differs_from"]][0]:
            raise StepFailed(f"envelope equals {expect['differs_from']!r}")
        if "save" in step:
            st.envelopes[step["save"]] = (env, step["run"])
        return
    if op == "prepare_import" and "same_as" in expect:
        if body.get("import") != st.imports[expect["same_as"]]["import"]:  # type: ignore[union-attr]
            raise StepFailed(f"not the same import as {expect['same_as']!r}")
    if op == "prepare_import" and "save" in step:
        st.imports[step["save"]] = body  # type: ignore[assignment]
    if op == "list_runs":
        entry = next((r for r in body or [] if r.get("run_id") == call["run_id"]), None)
        if "listed" in expect and expect["listed"] != (entry is not None):
            raise StepFailed(f"run {'not ' if expect['listed'] else ''}expected in the list")
        body = entry
    if "view" in expect:
        why = _subset(expect["view"], body)
        if why:
            raise StepFailed(why)


# ---- a helper of our own ---------------------------------------------------------------------


class Helper:
    """A packaged helper (``java -jar quarkus-run.jar serve``) in a temporary directory; a context manager."""

    def __init__(self, jar: str, java: str | None = None, startup_timeout: float = 60.0, tcp: bool = False) -> None:
        self.jar = jar
        self.java = java or _java()
        self.startup_timeout = startup_timeout
        self.tcp = tcp
        self.dir = ""
        self.socket = ""
        self.token_file = ""
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "Helper":
        self.dir = tempfile.mkdtemp(prefix="spice-conf-")
        os.chmod(self.dir, 0o700)
        self.socket = os.path.join(self.dir, "endpoint", "authority.sock")
        self.token_file = os.path.join(self.dir, "endpoint", "token")
        where = ["--listen", "127.0.0.1:0", "--token-file", self.token_file] if self.tcp else ["--socket", self.socket]
        log = open(os.path.join(self.dir, "serve.log"), "wb")
        try:
            self.proc = subprocess.Popen([self.java, "-jar", self.jar, "serve", "--authority-dir",
                                          os.path.join(self.dir, "authority"), *where],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + self.startup_timeout
        pause = 0.05
        while not self._listening():
            if self.proc.poll() is not None:
                out = self.log()
                self.__exit__(None, None, None)
                raise RuntimeError(f"the helper exited with {self.proc.returncode} before listening:\n{out}")
            if time.monotonic() > deadline:
                out = self.log()
                self.__exit__(None, None, None)
                raise RuntimeError(f"the helper did not listen within {self.startup_timeout} s:\n{out}")
            time.sleep(pause)  # a poll with a deadline, for the JVM to start
            pause = min(pause * 2, 0.2)
        return self

    def log(self) -> str:
        try:
            return Path(self.dir, "serve.log").read_text(errors="replace")
        except OSError:
            return ""

    def _listening(self) -> bool:
        for line in self.log().splitlines():
            if line.startswith("listening on"):
                if self.tcp:
                    self.port = int(line.rsplit(":", 1)[1])
                return True
        return False

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def _java() -> str:
    """``$JAVA_HOME/bin/java``, else a JDK 25 under /usr/lib/jvm, else ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    for jdk in sorted(Path("/usr/lib/jvm").glob("*25*/bin/java")):
        return str(jdk)
    found = shutil.which("java")
    if not found:
        raise RuntimeError("no java: set JAVA_HOME to a JDK 25 or put java on the PATH")
    return found


def run_all(socket_path: str, kit: Path, names: list[str] | None = None) -> Iterator[Result]:
    for _file, scenario in load_scenarios(kit, names):
        yield run_scenario(socket_path, kit, scenario)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m spice_authority.conformance",
                                 description="Run the conformance scenarios against a real helper.")
    ap.add_argument("--socket", help="the socket of a helper already serving")
    ap.add_argument("--jar", help="start a helper from this quarkus-run.jar (in a temporary directory)")
    ap.add_argument("--tcp", action="store_true", help="with --jar: the helper serves loopback TCP with a token file")
    ap.add_argument("--kit", type=Path, default=None, help="the conformance kit (default: the repository's)")
    ap.add_argument("--agent", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*", help="only these scenarios (name or file stem)")
    a = ap.parse_args(argv)
    if a.agent:
        return agent_main(a.socket)
    kit = a.kit or default_kit()
    if bool(a.socket) == bool(a.jar):
        ap.error("give exactly one of --socket and --jar")

    def go(socket_path: str) -> int:
        passed = failed = 0
        for r in run_all(socket_path, kit, a.names or None):
            if r.passed:
                passed += 1
                print(f"PASS {r.name}")
            else:
                failed += 1
                print(f"FAIL {r.name}: {r.message}")
        print(f"{passed} passed, {failed} failed")
        return 0 if failed == 0 and passed > 0 else 1

    if a.socket:
        return go(a.socket)
    with Helper(a.jar, tcp=a.tcp) as h:
        return go(f"tcp:127.0.0.1:{h.port}:{h.token_file}" if a.tcp else h.socket)


if __name__ == "__main__":
    sys.exit(main())
