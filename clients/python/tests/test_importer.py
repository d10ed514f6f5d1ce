"""The import order (ImportOrder) against a scripted client: what runs, in which order, and what
each failure leaves (abort before consume, uncertain after, stop before release on activate)."""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import json
import os
import unittest
from pathlib import Path
from typing import Any

from spice_authority import envelope as EN
from spice_authority import errors as E
from spice_authority.client import ImportView, RunView, Session
from spice_authority.importer import ImportOrder, ImportRefused, ImportUncertain

KIT = Path(os.environ.get("SPICE_SPEC_DIR", Path(__file__).resolve().parents[3] / "spec-kit"))


def envelope_of(payload: bytes) -> bytes:
    s = json.loads(payload)
    return EN.encode(EN.Envelope("spice.agent.snapshot/v1alpha2", s["run_id"], s["last_sequence"],
                                 EN.STATUS_LIFECYCLE[s["status"]], payload, b"\x00" * 32,
                                 EN.Authority(b"\x01" * 32, 1, b"\x02" * 32)))


SUSPENDED = (KIT / "payload-corpus/public/valid-01-minimal-suspended.json").read_bytes()
COMPLETED = (KIT / "payload-corpus/public/valid-03-completed-two-rounds.json").read_bytes()


def problem(cls: type[E.HelperProblem], status: int, code: str) -> E.HelperProblem:
    return cls(status, code, code, "scripted")


class ScriptedClient:
    """Records calls; ``fail`` maps a method name to the error it raises (a list: one per call)."""

    def __init__(self, **fail: Any) -> None:
        self.calls: list[str] = []
        self.fail = {k: (v if isinstance(v, list) else [v]) for k, v in fail.items()}

    def _maybe_fail(self, name: str) -> None:
        self.calls.append(name)
        errs = self.fail.get(name)
        if errs:
            e = errs.pop(0)
            if e is not None:
                raise e

    def prepare_import(self, session: Session, envelope: bytes) -> ImportView:
        self._maybe_fail("prepare")
        p = json.loads(EN.parse(envelope).payload)
        return ImportView("tx-1", p["run_id"], p["last_sequence"], p["last_sequence"] + 1)

    def consume(self, session: Session, tx: ImportView) -> RunView:
        self._maybe_fail("consume")
        return RunView(tx.run_id, "IMPORTING", 2, False)

    def activate(self, session: Session, tx: ImportView) -> RunView:
        self._maybe_fail("activate")
        return RunView(tx.run_id, "ACTIVE", 2, True)

    def abort_import(self, session: Session, tx: ImportView) -> None:
        self._maybe_fail("abort")

    def release(self, session: Session, run_id: str) -> None:
        self._maybe_fail("release")


class ImportOrderTest(unittest.TestCase):
    def order(self, client: ScriptedClient, envelope: bytes = b"", check: Any = None, log: list[str] | None = None):
        log = client.calls if log is None else log

        def check_plan(snapshot: Any, tx: Any) -> Any:
            log.append("check")
            return check(snapshot) if check else True

        def commit(snapshot: Any, tx: Any) -> str:
            log.append("commit")
            return "handle"

        def stop(handle: str) -> None:
            log.append("stop:" + handle)

        return ImportOrder(client, Session("s", 1), envelope or envelope_of(SUSPENDED),  # type: ignore[arg-type]
                           check_plan=check_plan, commit=commit, stop=stop)

    def test_the_order(self) -> None:
        c = ScriptedClient()
        with self.order(c) as imported:
            self.assertEqual((imported.run_id, imported.next_sequence, imported.committed), ("run-1", 8, "handle"))
            self.assertEqual(imported.run.phase, "ACTIVE")
        self.assertEqual(c.calls, ["prepare", "check", "consume", "commit", "activate"])

    def test_an_exception_in_the_body_hands_the_lease_back(self) -> None:
        c = ScriptedClient()
        with self.assertRaises(KeyError):
            with self.order(c):
                raise KeyError("host failed")
        self.assertEqual(c.calls[-1], "release")

    def test_a_plan_refusal_aborts_before_consume(self) -> None:
        for verdict in (False, ValueError("plan changed")):
            c = ScriptedClient()

            def check(s: Any, v: Any = verdict) -> Any:
                if isinstance(v, Exception):
                    raise v
                return v

            with self.subTest(verdict=verdict), self.assertRaises(ImportRefused) as cm:
                with self.order(c, check=check):
                    self.fail("the body must not run")
            self.assertEqual(cm.exception.reason, "PLAN_REFUSED")
            self.assertEqual(c.calls, ["prepare", "check", "abort"])

    def test_terminal_and_malformed_envelopes_are_refused(self) -> None:
        c = ScriptedClient()
        with self.assertRaises(ImportRefused) as cm:
            self.order(c, envelope_of(COMPLETED)).run()
        self.assertEqual(cm.exception.reason, "NOT_SUSPENDED")
        self.assertEqual(c.calls, ["prepare", "abort"])
        c = ScriptedClient()
        with self.assertRaises(ImportRefused) as cm:
            self.order(c, b"\x0a\xff").run()
        self.assertEqual((cm.exception.reason, c.calls), ("MALFORMED", []))

    def test_a_lost_prepare_is_asked_once_more_a_refusal_is_not(self) -> None:
        c = ScriptedClient(prepare=[E.HelperTimeout("lost")])
        self.order(c).run()
        self.assertEqual(c.calls[:2], ["prepare", "prepare"])
        c = ScriptedClient(prepare=[problem(E.Busy, 409, "busy")])
        with self.assertRaises(ImportRefused) as cm:
            self.order(c).run()
        self.assertEqual((cm.exception.reason, c.calls), ("AUTHORITY_REFUSED", ["prepare"]))
        self.assertIsInstance(cm.exception.__cause__, E.Busy)

    def test_consume_refused_or_uncertain(self) -> None:
        c = ScriptedClient(consume=problem(E.StateConflict, 409, "state_conflict"))
        with self.assertRaises(ImportRefused) as cm:
            self.order(c).run()
        self.assertEqual((cm.exception.reason, c.calls), ("CONSUME_REFUSED", ["prepare", "check", "consume", "abort"]))
        for err in (problem(E.Uncertain, 500, "uncertain"), E.HelperTimeout("t"), E.HelperProtocolError("p")):
            c = ScriptedClient(consume=err)
            with self.subTest(type(err).__name__), self.assertRaises(ImportUncertain):
                self.order(c).run()
            self.assertEqual(c.calls, ["prepare", "check", "consume", "abort"])
            self.assertEqual(c.calls.count("consume"), 1, "never retried")

    def test_an_uncertain_activate_stops_the_run_before_the_import_is_released(self) -> None:
        for err in (problem(E.Uncertain, 500, "uncertain"), E.HelperTimeout("t"), problem(E.Busy, 409, "busy")):
            c = ScriptedClient(activate=err)
            with self.subTest(type(err).__name__), self.assertRaises(ImportUncertain) as cm:
                with self.order(c):
                    self.fail("the body must not run")
            self.assertEqual(c.calls, ["prepare", "check", "consume", "commit", "activate", "stop:handle", "abort",
                                       "release"])
            self.assertIn("not retried", str(cm.exception))

    def test_a_failed_commit_after_consume_is_uncertain(self) -> None:
        c = ScriptedClient()
        order = ImportOrder(c, Session("s", 1), envelope_of(SUSPENDED), check_plan=lambda s, t: True,  # type: ignore[arg-type]
                            commit=lambda s, t: 1 / 0)
        with self.assertRaises(ImportUncertain):
            order.run()
        self.assertEqual(c.calls, ["prepare", "consume", "abort"])


if __name__ == "__main__":
    unittest.main()
