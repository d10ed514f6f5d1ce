"""A scripted agent host for the cross-language recovery test (``tests/test_cross_language.py``).

    python3 clients/python/testing/recovery_host.py --socket S --role first|import \
        --run-id ID --envelope FILE --ledger FILE

The same script as ``clients/typescript/testing/recovery-host.js`` (the two must stay alike): a run
of three turns; each turn is four events (the user's input, the model's call of the mutating tool
``append_ledger``, its result, the answer), so after turn t the last sequence is 4t. The tool
appends one line ``<run_id> <call_id> python <pid>`` to the ledger and fsyncs it: a side effect
that ran twice shows as two lines.

``first``: starts the run, runs turn 1, suspends it (signs the payload), writes the envelope to
FILE (atomically), prints ``suspended RUN_ID LAST_SEQUENCE`` and then waits, holding the run's
lease, until it is killed (the test kills it with SIGKILL).

``import``: imports the envelope (the import order with the plan check), continues at the next
sequence with the turns not yet done, signs the terminal (completed) payload, and prints one JSON
line: ``{"run_id", "imported_last_sequence", "resumed_at", "final_last_sequence", "phase"}``.
Exit 0 on success; any failure is a message on standard error and exit 1 (never a token or a
session id).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spice_authority import AuthorityClient, plan  # noqa: E402
from spice_authority.envelope import parse as parse_envelope  # noqa: E402
from spice_authority.payload import Part, SnapshotBuilder  # noqa: E402

TURNS = 3
EVENTS_PER_TURN = 4
LEDGER_TOOL = plan.ToolDefinition("append_ledger", "Appends one entry to the ledger.",
                                  b'{"type":"object","properties":{"entry":{"type":"string"}}}',
                                  "mutating", "unsafe", ["filesystem.write"])
TOOLS = [LEDGER_TOOL]
IDENTITY = plan.plan_identity(["stage:kernel", "provider:scripted@1", "broker:injected"],
                              plan.static_tool_plan_id(TOOLS), "recovery-host:v1", TOOLS)


def append_ledger(ledger: Path, run_id: str, call_id: str) -> None:
    """The mutating tool: one line, fsynced before the call returns."""
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{run_id} {call_id} python {os.getpid()}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def run_turn(ledger: Path, run_id: str, turn: int, next_sequence: int) -> int:
    """Runs one turn from ``next_sequence``; returns the turn's last sequence."""
    if next_sequence != EVENTS_PER_TURN * (turn - 1) + 1:
        raise SystemExit(f"turn {turn} cannot start at sequence {next_sequence}")
    append_ledger(ledger, run_id, f"t{turn}-write")  # the tool call's event is next_sequence + 1
    return next_sequence + EVENTS_PER_TURN - 1


def payload(run_id: str, turns: int, last_sequence: int, status: str) -> bytes:
    b = (SnapshotBuilder().run_id(run_id).definition("recovery-host", "scripted", TURNS).completed_turns(turns)
         .plan_identity(IDENTITY).last_sequence(last_sequence).status(status))
    for t in range(1, turns + 1):
        call = f"t{t}-write"
        b.message(f"input-{t}", "user", [Part.text_part(f"turn {t}")])
        b.message(f"call-{t}", "assistant", [Part.tool_call("append_ledger", call, f'{{"entry":"turn {t} done"}}')])
        b.message(f"result-{t}", "tool", [Part.tool_result("append_ledger", call, '{"ok":true}')])
        b.message(f"answer-{t}", "assistant", [Part.text_part(f"turn {t} done")])
    return b.build().canonical


def first(client: AuthorityClient, run_id: str, envelope_file: Path, ledger: Path) -> int:
    session = client.open_session()
    client.start(session, run_id)
    last = run_turn(ledger, run_id, 1, 1)
    envelope = client.sign(session, run_id, payload(run_id, 1, last, "suspended"))
    tmp = envelope_file.with_name(envelope_file.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(envelope)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, envelope_file)
    print(f"suspended {run_id} {last}", flush=True)
    while True:  # holds the lease until killed
        signal.pause()


def import_and_complete(client: AuthorityClient, run_id: str, envelope_file: Path, ledger: Path) -> int:
    envelope = envelope_file.read_bytes()
    imported_last = parse_envelope(envelope).last_sequence
    session = client.open_session()
    with client.import_run(session, envelope, check_plan=lambda s, tx: plan.matches(s.plan_identity, TOOLS)) as imported:
        snapshot = imported.snapshot
        if snapshot.run_id != run_id or [m.id for m in snapshot.history] != [
                f"{k}-{t}" for t in range(1, snapshot.completed_turns + 1) for k in ("input", "call", "result", "answer")]:
            raise SystemExit("the imported snapshot is not this script's run")
        resumed_at = imported.next_sequence
        seq = resumed_at
        for turn in range(snapshot.completed_turns + 1, TURNS + 1):
            seq = run_turn(ledger, run_id, turn, seq) + 1
        final = seq - 1
        client.sign(session, run_id, payload(run_id, TURNS, final, "completed"))
    phase = client.run(run_id).phase
    client.close_session(session)
    print(json.dumps({"run_id": run_id, "imported_last_sequence": imported_last, "resumed_at": resumed_at,
                      "final_last_sequence": final, "phase": phase}), flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--role", choices=("first", "import"), required=True)
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--envelope", required=True, type=Path)
    ap.add_argument("--ledger", required=True, type=Path)
    a = ap.parse_args()
    client = AuthorityClient.on_socket(a.socket)
    try:
        if a.role == "first":
            return first(client, a.run_id, a.envelope, a.ledger)
        return import_and_complete(client, a.run_id, a.envelope, a.ledger)
    except Exception as e:  # noqa: BLE001  (a script: one line on stderr, exit 1)
        print(f"recovery_host ({a.role}): {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
