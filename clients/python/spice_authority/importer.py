"""The import order as one call (RFC 0007, wire-format.md e.7; the Java engine's ``importRun``).

    with ImportOrder(client, session, envelope, check_plan=check, commit=commit, stop=stop) as imported:
        run = imported.committed           # what commit() returned; the run's lease is this session's
        ...                                # go on at imported.next_sequence

The order, and what each failure leaves:

1. The envelope is read here (its payload decoded and validated); a malformed one is refused
   before anything is sent (:class:`ImportRefused`, ``MALFORMED``).
2. **prepare** (``POST /v1/imports``): the helper verifies the claim and locks the run. A lost
   answer (timeout, unreadable answer, ``uncertain``) is asked once more: prepare writes nothing,
   and the helper answers the same session's identical envelope with the import it holds. A
   refusal is :class:`ImportRefused` (``AUTHORITY_REFUSED``) with the helper's error as cause.
3. The checks, then the caller's **plan check** ``check_plan(snapshot, import_view)``: the snapshot
   must be suspended and be what the helper prepared (run ID, sequence); ``check_plan`` raises (or
   returns False) to refuse. Any failure here **aborts** the prepared import (``DELETE``): the run
   stays SUSPENDED for a right importer (:class:`ImportRefused`).
4. **consume** (the consume point, durable IMPORTING). A refusal aborts and is
   :class:`ImportRefused` (``CONSUME_REFUSED``); an unknown outcome is :class:`ImportUncertain`,
   never retried.
5. The caller's **commit** ``commit(snapshot, import_view)`` (its run, not yet executing). A failure
   after the consume point is :class:`ImportUncertain`; the import is released.
6. **activate**: only its answer lets the run execute. On any failure the caller's
   ``stop(committed)`` is called first (stop and join the run), then the import is released, then
   the session's lease of the run is handed back (as the Java engine does), and
   :class:`ImportUncertain` is raised; nothing is retried.

Leaving the ``with`` block by an exception hands the run's lease back (``DELETE …/lease``: the host
stopped); leaving it normally keeps the lease (the caller suspended, completed or goes on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from . import errors as E
from .envelope import EnvelopeMalformed
from .envelope import parse as parse_envelope
from .payload import PayloadRejected, Snapshot
from .payload import decode as decode_payload

if TYPE_CHECKING:
    from .client import AuthorityClient, ImportView, RunView, Session

T = TypeVar("T")

#: The largest sequence an import accepts, so that 2^32 events remain to go on (as the Java engine).
MAX_IMPORTED_SEQUENCE = (1 << 64) - 2 - (1 << 32)


class ImportRefused(Exception):
    """The import did not pass its consume point; the run is as it was (SUSPENDED at the helper).

    ``reason`` is one of ``MALFORMED``, ``AUTHORITY_REFUSED``, ``NOT_SUSPENDED``, ``SEQUENCE_SPACE``,
    ``PLAN_REFUSED``, ``CONSUME_REFUSED``; ``__cause__`` is the underlying error, if any.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class ImportUncertain(Exception):
    """The import passed (or may have passed) its consume point and then failed: its outcome is
    unknown. Never retried; the caller's run was stopped (activate) or never started."""

    def __init__(self, run_id: str, message: str) -> None:
        super().__init__(message)
        self.run_id = run_id


@dataclass(frozen=True)
class Imported(Generic[T]):
    """An imported run, ACTIVE with this session's lease."""

    snapshot: Snapshot
    import_view: "ImportView"
    run: "RunView"
    committed: T

    @property
    def run_id(self) -> str:
        return self.snapshot.run_id

    @property
    def next_sequence(self) -> int:
        return self.import_view.next_sequence


class ImportOrder(Generic[T]):
    """A context manager doing the import order; see the module comment."""

    def __init__(self, client: "AuthorityClient", session: "Session", envelope: bytes, *,
                 check_plan: Callable[[Snapshot, "ImportView"], Any],
                 commit: Callable[[Snapshot, "ImportView"], T] = lambda s, tx: None,  # type: ignore[assignment,return-value]
                 stop: Callable[[T], None] = lambda committed: None) -> None:
        self.client = client
        self.session = session
        self.envelope = bytes(envelope)
        self.check_plan = check_plan
        self.commit = commit
        self.stop = stop
        self.imported: Imported[T] | None = None

    def __enter__(self) -> Imported[T]:
        self.imported = self.run()
        return self.imported

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc is not None and self.imported is not None:
            try:
                self.client.release(self.session, self.imported.run_id)
            except E.HelperError:
                pass  # the session's end releases it

    # ---- the order -------------------------------------------------------------------------

    def run(self) -> Imported[T]:
        c, s = self.client, self.session
        try:
            snapshot = decode_payload(parse_envelope(self.envelope).payload)
        except (EnvelopeMalformed, PayloadRejected) as e:
            raise ImportRefused("MALFORMED", f"the envelope is not a valid snapshot envelope: {e}") from None
        run_id = snapshot.run_id
        # 1. prepare
        first_lost = False
        try:
            try:
                tx = c.prepare_import(s, self.envelope)
            except E.HelperError as lost:
                if not lost.outcome_unknown:
                    raise
                first_lost = True
                tx = c.prepare_import(s, self.envelope)
        except E.HelperError as e:
            lost_text = ("the helper's answer to the import of run {r} was lost (nothing durable was written; it may "
                         "hold the prepared import until this session ends): ")
            prefix = (lost_text if first_lost or e.outcome_unknown else "the helper refused to import run {r}: ")
            raise ImportRefused("AUTHORITY_REFUSED", prefix.format(r=run_id) + str(e)) from e
        # 2. checks and the caller's plan check; any refusal aborts the prepared import
        try:
            if snapshot.status != "suspended":
                raise ImportRefused("NOT_SUSPENDED", f"run {run_id} is {snapshot.status}: terminal snapshots are "
                                                     "inspectable, never resumable")
            if snapshot.last_sequence > MAX_IMPORTED_SEQUENCE:
                raise ImportRefused("SEQUENCE_SPACE", f"run {run_id} is at event sequence {snapshot.last_sequence}: "
                                                      "too close to the end of the sequence space to go on")
            if tx.last_sequence != snapshot.last_sequence or tx.run_id != run_id:
                raise ImportRefused("MALFORMED", "the helper prepared another run or sequence than the envelope's")
            try:
                verdict = self.check_plan(snapshot, tx)
            except ImportRefused:
                raise
            except Exception as e:
                raise ImportRefused("PLAN_REFUSED", f"run {run_id}: the plan check refused it: {e}") from e
            if verdict is False:
                raise ImportRefused("PLAN_REFUSED", f"run {run_id}: the plan check refused it")
        except BaseException:
            self._abort_quietly(tx)
            raise
        # 3. consume: the durable consume point
        try:
            c.consume(s, tx)
        except E.HelperError as e:
            self._abort_quietly(tx)
            if e.outcome_unknown:
                raise ImportUncertain(run_id, f"consume of run {run_id} is uncertain: {e}; it is not retried") from e
            raise ImportRefused("CONSUME_REFUSED", f"the helper refused to consume run {run_id}: {e}") from e
        except BaseException:
            self._abort_quietly(tx)
            raise
        # 4. the caller's commit (not executing: no lease yet)
        try:
            committed = self.commit(snapshot, tx)
        except BaseException as e:
            self._abort_quietly(tx)
            raise ImportUncertain(run_id, f"run {run_id} could not be committed after its consume point ({e!r}); "
                                          "the import was released and is not retried") from e
        # 5. activate: only a returned active lease lets the run execute
        try:
            view = c.activate(s, tx)
        except BaseException as e:
            # RFC 0007: stop and join the committed run before the import lock is released.
            try:
                self.stop(committed)
            finally:
                self._abort_quietly(tx)
                handed = self._hand_back(run_id)
            raise ImportUncertain(run_id, f"activate of run {run_id} failed after consume ({e}); the committed run "
                                          f"was stopped, and is not retried{handed}") from e
        return Imported(snapshot, tx, view, committed)

    def _abort_quietly(self, tx: "ImportView") -> None:
        try:
            self.client.abort_import(self.session, tx)
        except E.HelperError:
            # Before consume, the prepared import ends with the session; after it the helper
            # answers uncertain and the primary failure already says so.
            pass

    def _hand_back(self, run_id: str) -> str:
        """An activate that took effect left the run ACTIVE with this session's lease: release it,
        so the run can be abandoned before the session ends."""
        try:
            self.client.release(self.session, run_id)
            return "; its lease (if the activate had taken effect) was handed back"
        except E.StateConflict:
            return "; this session held no lease of it"
        except E.HelperError:
            return "; whether this session holds its lease is unknown (the release failed); the session's end releases any"
