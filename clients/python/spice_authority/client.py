"""The typed client of the helper's HTTP API v1 (mirrors the Java ``AuthorityClient``).

One method per v1 operation. A refusal raises the :class:`~spice_authority.errors.HelperProblem`
subclass of its code; no connection, a timeout, an unreadable answer or an untrusted endpoint
raises a :class:`~spice_authority.errors.HelperTransportError`.

Retries (:class:`RetryPolicy`) only where the answer proves that nothing happened: no connection
at all (nothing was sent), ``unavailable``, ``busy`` with ``Retry-After`` or for a quota (429),
``cancelled`` except on a sign. Never ``uncertain``, never a timeout or an unreadable answer after
the request went out. Run IDs that break the one run-ID rule are refused here, before anything is
sent. No message or ``repr`` shows a session id or a token. Thread-safe: no connection is held
between calls.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import errors as E
from .envelope import MAX_ENCODED_BYTES
from .payload import RULES as _RULES
from .payload import is_valid_run_id
from .transport import (Endpoint, Response, TcpEndpoint, Transport, TokenReader, UnixEndpoint, default_socket,
                        read_token_file, segment)

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json"
PROBLEM = "application/problem+json"
SESSION_HEADER = "Spice-Session"
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class RetryPolicy:
    """How often a call is sent again when the answer proves nothing happened.

    Backoff doubles from ``initial_backoff`` up to ``max_backoff`` (seconds); a ``Retry-After``
    longer than the backoff is honoured up to ``max_backoff``.
    """

    max_attempts: int = 4
    initial_backoff: float = 0.05
    max_backoff: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.max_attempts <= 100:
            raise ValueError("max_attempts must be 1..100")
        if self.initial_backoff < 0 or self.max_backoff < self.initial_backoff:
            raise ValueError("backoff must be 0 <= initial_backoff <= max_backoff")

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """The pause before attempt ``attempt + 1`` (attempts count from 1)."""
        d = self.initial_backoff
        i = 1
        while i < attempt and d < self.max_backoff:
            d *= 2
            i += 1
        if retry_after is not None and retry_after > d:
            d = retry_after
        return min(d, self.max_backoff)


RetryPolicy.NONE = RetryPolicy(1, 0.0, 0.0)  # type: ignore[attr-defined]
RetryPolicy.DEFAULT = RetryPolicy()  # type: ignore[attr-defined]


class Session:
    """An open session of this host process. SECURITY: the id is a bearer secret for the process's
    leases; it is never in ``repr``/``str`` nor in a message of this library."""

    __slots__ = ("_id", "pid")

    def __init__(self, session_id: str, pid: int) -> None:
        self._id = session_id
        self.pid = pid

    def __repr__(self) -> str:
        return f"Session(pid={self.pid})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a Session is not serialisable")


@dataclass(frozen=True)
class RunView:
    """A run as the helper shows it; ``json`` is the helper's document as it came."""

    run_id: str
    phase: str
    run_generation: int
    owned: bool
    fenced: bool = False
    json: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ImportView:
    """A prepared import: the helper verified the envelope and holds the run for this session."""

    import_id: str
    run_id: str
    last_sequence: int
    next_sequence: int
    json: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class AuthorityView:
    scope_id: str
    key_generation: int
    state: str
    directory: str | None
    endpoint: str | None
    sessions: int
    owned_runs: int
    imports: int
    leases: int
    runs_by_phase: Mapping[str, int]
    unreadable_records: int
    json: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _visible_ascii(s: str) -> bool:
    return bool(s) and all(0x20 < ord(c) < 0x7F for c in s)


def _require_run_id(run_id: str) -> None:
    if not is_valid_run_id(run_id):
        raise ValueError("not a run ID: " + _RULES["P-RUNID"])


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: Called after every exchange that got an answer: (method, path, status). For logs and tests.
Observer = Callable[[str, str, int], None]


class AuthorityClient:
    """The typed client; see the module comment for the guarantees.

    >>> client = AuthorityClient.on_default_socket()           # doctest: +SKIP
    >>> s = client.open_session(); client.start(s, "run-1")    # doctest: +SKIP
    """

    def __init__(self, endpoint: Endpoint, *, retry: RetryPolicy = RetryPolicy(), connect_timeout: float = DEFAULT_TIMEOUT,
                 read_timeout: float = DEFAULT_TIMEOUT, user_agent: str = "spice-authority-python",
                 token_reader: TokenReader = read_token_file, observer: Observer | None = None,
                 _sleep: Callable[[float], None] = time.sleep) -> None:
        self._http = Transport(endpoint, connect_timeout=connect_timeout, read_timeout=read_timeout,
                               user_agent=user_agent, token_reader=token_reader)
        self.retry = retry
        self._observer = observer
        self._sleep = _sleep

    @classmethod
    def on_default_socket(cls, **options: Any) -> "AuthorityClient":
        return cls(default_socket(), **options)

    @classmethod
    def on_socket(cls, path: str | os.PathLike[str], **options: Any) -> "AuthorityClient":
        return cls(UnixEndpoint(os.fspath(path)), **options)

    @classmethod
    def on_tcp(cls, address: str, port: int, token_file: str | os.PathLike[str], **options: Any) -> "AuthorityClient":
        return cls(TcpEndpoint(address, port, os.fspath(token_file)), **options)

    @property
    def endpoint(self) -> Endpoint:
        return self._http.endpoint

    def __repr__(self) -> str:
        return f"AuthorityClient[{self._http.endpoint.display()}]"

    # ---- sessions ----------------------------------------------------------------------------

    def open_session(self, pid: int | None = None) -> Session:
        """``POST /v1/sessions``: a session bound to this process (or ``pid``: on a socket, an ancestor)."""
        own = os.getpid() if pid is None else pid
        body = json.dumps({"pid": own}).encode()
        o = self._object(self._call("POST", "/v1/sessions", None, JSON, JSON, body))
        sid = o.get("session")
        if not isinstance(sid, str) or not _visible_ascii(sid):
            raise self._unexpected("no session")
        p = o.get("pid")
        return Session(sid, p if _is_int(p) else own)

    def close_session(self, session: Session) -> None:
        """``DELETE /v1/sessions/{session}``: the helper releases its leases and imports."""
        self._call("DELETE", "/v1/sessions/" + segment(session._id), session, None, JSON, None)

    # ---- authority and runs ------------------------------------------------------------------

    def authority(self) -> AuthorityView:
        """``GET /v1/authority``."""
        a = self._object(self._call("GET", "/v1/authority", None, None, JSON, None))
        try:
            byp = a["runs_by_phase"]
            if not isinstance(byp, dict) or not all(_is_int(v) for v in byp.values()):
                raise TypeError
            ints = {k: a[k] for k in ("key_generation", "sessions", "owned_runs", "imports", "leases",
                                      "unreadable_records")}
            if not all(_is_int(v) for v in ints.values()) or not isinstance(a["scope_id"], str) \
                    or not isinstance(a["state"], str):
                raise TypeError
            return AuthorityView(a["scope_id"], ints["key_generation"], a["state"], a.get("directory"),
                                 a.get("endpoint"), ints["sessions"], ints["owned_runs"], ints["imports"],
                                 ints["leases"], dict(byp), ints["unreadable_records"], json=a)
        except (KeyError, TypeError):
            raise self._unexpected("not an authority view") from None

    def runs(self) -> list[RunView]:
        """``GET /v1/runs``: every run with a verified record."""
        parsed = self._parse(self._call("GET", "/v1/runs", None, None, JSON, None))
        if not isinstance(parsed, list):
            raise self._unexpected("malformed JSON")
        return [self._run_view(o) for o in parsed]

    def run(self, run_id: str) -> RunView:
        """``GET /v1/runs/{run_id}``."""
        return self._run_view(self._parse(self._call("GET", self._run_path(run_id), None, None, JSON, None)))

    def start(self, session: Session, run_id: str) -> RunView:
        """``POST /v1/runs``: durable ACTIVE at generation 1, the lease to ``session``."""
        _require_run_id(run_id)
        body = json.dumps({"run_id": run_id}, ensure_ascii=False).encode("utf-8")
        return self._run_view(self._parse(self._call("POST", "/v1/runs", session, JSON, JSON, body)))

    def sign(self, session: Session, run_id: str, payload: bytes) -> bytes:
        """``POST /v1/runs/{run_id}/snapshots``: the payload in, the signed envelope (binary
        protobuf) out. The identical payload of a SUSPENDED run gives the identical envelope again,
        to any session: a lost answer is recovered by signing again. A ``cancelled`` answer is not
        repeated (it may follow the write). The answer is checked in place (:func:`envelope_mismatch`):
        anything but the envelope of this payload is a :class:`HelperProtocolError` (outcome unknown)."""
        if not isinstance(payload, (bytes, bytearray)):
            raise TypeError("payload must be bytes")
        payload = bytes(payload)
        envelope = self._call("POST", self._run_path(run_id) + "/snapshots", session, PAYLOAD, PROTOBUF, payload,
                              signing=True)
        # SECURITY: an answer that is not the envelope of this payload is never taken for one: the
        # outcome of the sign is then unknown (the host must not go on as if it had suspended).
        why = envelope_mismatch(envelope, run_id, payload)
        if why is not None:
            raise self._unexpected(f"the answer to the sign of run {run_id} is not its envelope ({why}); "
                                   "the outcome is unknown")
        return envelope

    def resume(self, session: Session, run_id: str) -> RunView:
        """``POST /v1/runs/{run_id}/resume``: local resume, ACTIVE at the next generation."""
        return self._run_view(self._parse(self._call("POST", self._run_path(run_id) + "/resume", session, None, JSON,
                                                     None)))

    def release(self, session: Session, run_id: str) -> None:
        """``DELETE /v1/runs/{run_id}/lease``: the host stopped; nothing is written."""
        self._call("DELETE", self._run_path(run_id) + "/lease", session, None, JSON, None)

    def abandon(self, session: Session, run_id: str) -> RunView:
        """``POST /v1/runs/{run_id}/abandon``: operator action on an orphan, a CANCELLED tombstone."""
        return self._run_view(self._parse(self._call("POST", self._run_path(run_id) + "/abandon", session, None, JSON,
                                                     None)))

    # ---- imports -----------------------------------------------------------------------------

    def prepare_import(self, session: Session, envelope: bytes) -> ImportView:
        """``POST /v1/imports``: verify the envelope and lock the run for this session's import."""
        if not isinstance(envelope, (bytes, bytearray)):
            raise TypeError("envelope must be bytes")
        o = self._object(self._call("POST", "/v1/imports", session, PROTOBUF, JSON, bytes(envelope)))
        iid, rid, last, nxt = o.get("import"), o.get("run_id"), o.get("last_sequence"), o.get("next_sequence")
        if not isinstance(iid, str) or not _visible_ascii(iid) or not isinstance(rid, str) or not _is_int(last) \
                or not _is_int(nxt):
            raise self._unexpected("not an import")
        return ImportView(iid, rid, last, nxt, json=o)

    def consume(self, session: Session, tx: ImportView) -> RunView:
        """``POST /v1/imports/{import}/consume``: durable IMPORTING, the consume point."""
        return self._run_view(self._parse(self._call("POST", self._import_path(tx) + "/consume", session, None, JSON,
                                                     None)))

    def activate(self, session: Session, tx: ImportView) -> RunView:
        """``POST /v1/imports/{import}/activate``: durable ACTIVE; the run's lease is now this session's."""
        return self._run_view(self._parse(self._call("POST", self._import_path(tx) + "/activate", session, None, JSON,
                                                     None)))

    def abort_import(self, session: Session, tx: ImportView) -> None:
        """``DELETE /v1/imports/{import}``: clean before consume; after it, ``uncertain``."""
        self._call("DELETE", self._import_path(tx), session, None, JSON, None)

    def inspect(self, envelope: bytes) -> Mapping[str, Any]:
        """``POST /v1/snapshots/inspect``: the structural view of an envelope (never says it is authentic)."""
        o = self._parse(self._call("POST", "/v1/snapshots/inspect", None, PROTOBUF, JSON, bytes(envelope)))
        if not isinstance(o, dict):
            raise self._unexpected("malformed JSON")
        return o

    def import_run(self, session: Session, envelope: bytes, **kwargs: Any) -> Any:
        """The import order as one call; see :class:`spice_authority.importer.ImportOrder`."""
        from .importer import ImportOrder
        return ImportOrder(self, session, envelope, **kwargs)

    # ---- plumbing ----------------------------------------------------------------------------

    @staticmethod
    def _run_path(run_id: str) -> str:
        _require_run_id(run_id)
        return "/v1/runs/" + segment(run_id)

    @staticmethod
    def _import_path(tx: ImportView) -> str:
        return "/v1/imports/" + segment(tx.import_id)

    def _call(self, method: str, target: str, session: Session | None, content_type: str | None, accept: str,
              body: bytes | None, signing: bool = False) -> bytes:
        headers = {"Accept": accept + ", " + PROBLEM}
        if content_type is not None:
            headers["Content-Type"] = content_type
        if session is not None:
            headers[SESSION_HEADER] = session._id
        attempt = 1
        while True:
            retry_after: float | None = None
            try:
                r = self._http.send(method, target, headers, body, MAX_ENCODED_BYTES if signing else 8 * 1024 * 1024)
                if self._observer is not None:
                    # SECURITY: the observer (a log, a metric) never sees the session id.
                    shown = target.split("?")[0]
                    if session is not None:
                        shown = shown.replace(segment(session._id), "<session>")
                    self._observer(method, shown, r.status)
                if r.ok:
                    return r.body
                raise self._problem(r, session, signing)
            except E.HelperUnreachable:
                # Nothing was sent: repeating cannot do anything twice.
                if attempt >= self.retry.max_attempts:
                    raise
            except E.HelperProblem as p:
                # SECURITY: only an answer that proves nothing happened is repeated; uncertain never is.
                if not p.nothing_happened() or attempt >= self.retry.max_attempts:
                    raise
                retry_after = p.retry_after if isinstance(p, E.Busy) else None
            self._sleep(self.retry.backoff(attempt, retry_after))
            attempt += 1

    def _problem(self, r: Response, session: Session | None, signing: bool) -> E.HelperError:
        reason = r.reason or "(no reason given)"
        try:
            p = json.loads(r.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            p = None
        if not isinstance(p, dict) or not isinstance(p.get("code"), str):
            return self._unexpected(f"HTTP {r.status} {reason}")
        detail = p["detail"] if isinstance(p.get("detail"), str) else reason
        title = p["title"] if isinstance(p.get("title"), str) else ""
        rule = p["rule"] if isinstance(p.get("rule"), str) else None
        if session is not None:
            # SECURITY: the session id never reaches a message, even if the helper echoed it.
            detail = detail.replace(session._id, "<session>")
            title = title.replace(session._id, "<session>")
        ra = r.header("retry-after")
        retry_after = float(ra) if ra is not None and ra.isdigit() and ra.isascii() and len(ra) <= 6 else None
        return E.problem(r.status, p["code"], title, detail, rule, retry_after, signing)

    def _unexpected(self, what: str) -> E.HelperProtocolError:
        return E.HelperProtocolError(f"unexpected response from the helper at {self._http.endpoint.display()}: {what}")

    def _parse(self, body: bytes) -> Any:
        try:
            return json.loads(body.decode("utf-8"), parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise self._unexpected("malformed JSON") from None

    def _object(self, body: bytes) -> dict[str, Any]:
        o = self._parse(body)
        if not isinstance(o, dict):
            raise self._unexpected("malformed JSON")
        return o

    def _run_view(self, o: Any) -> RunView:
        if (isinstance(o, dict) and isinstance(o.get("run_id"), str) and isinstance(o.get("phase"), str)
                and o["phase"] and _is_int(o.get("run_generation"))
                and (o.get("owned") is None or isinstance(o.get("owned"), bool))
                and (o.get("fenced") is None or isinstance(o.get("fenced"), bool))):
            return RunView(o["run_id"], o["phase"], o["run_generation"], o.get("owned") is True,
                           o.get("fenced") is True, json=o)
        raise self._unexpected("not a run")


def envelope_mismatch(envelope: bytes, run_id: str, payload: bytes) -> str | None:
    """Why ``envelope`` is not the signed envelope of ``payload`` for ``run_id``, or None when it is:
    the format, the run ID, the payload byte for byte and its SHA-256, the lifecycle and sequence
    the payload implies, and the claim's shape (32-byte scope, a key generation, a 32-byte HMAC).
    The claim itself only the helper can verify (at import)."""
    import hashlib

    from .envelope import STATUS_LIFECYCLE, EnvelopeMalformed, parse
    try:
        env = parse(envelope)
    except EnvelopeMalformed as e:
        return f"not an envelope: {e}"
    if env.format != "spice.agent.snapshot/v1alpha2":
        return "another format"
    if env.run_id != run_id:
        return "another run"
    if env.payload != payload or env.sha256 != hashlib.sha256(payload).digest():
        return "another payload or digest"
    try:
        p = json.loads(payload)
        lifecycle = STATUS_LIFECYCLE.get(p.get("status"))
        sequence = p.get("last_sequence")
    except (ValueError, AttributeError):
        lifecycle, sequence = None, None
    if lifecycle is None or env.lifecycle != lifecycle or env.last_sequence != sequence:
        return "another lifecycle or sequence"
    a = env.authority
    if a is None or len(a.scope_id) != 32 or a.generation < 1 or len(a.hmac_sha256) != 32:
        return "no claim of the expected shape"
    return None


def _no_constant(name: str) -> Any:
    raise ValueError("not JSON: " + name)
