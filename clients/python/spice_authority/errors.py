"""Errors of the host client: a transport failure, or the helper's refusal (one class per code).

The names are those of the Java host library (``spice.authority.host``): :class:`HelperProblem` and
its subclasses, one per stable problem ``code`` of the API; :class:`HelperTransportError` and its
subclasses for everything that is not an answer.

Guarantees: no message or ``repr`` of this module carries a session id or a token (the client
replaces a session id the helper echoed with ``<session>``; tokens never reach a message).
"""

from __future__ import annotations


class HelperError(Exception):
    """Base of every error of the host client about the helper."""

    @property
    def outcome_unknown(self) -> bool:
        """True when the call may have taken effect at the helper (its answer is unknown)."""
        return True


# ---- no answer -------------------------------------------------------------------------------


class HelperTransportError(HelperError):
    """No usable answer: no connection, a timeout, an unreadable answer, an untrusted endpoint."""

    #: True when nothing of the request can have reached the helper.
    nothing_sent: bool = False

    @property
    def outcome_unknown(self) -> bool:
        return not self.nothing_sent


#: The Java library's name for :class:`HelperTransportError`.
HelperTransportException = HelperTransportError


class HelperUnreachable(HelperTransportError):
    """No connection (no socket, nothing listening, connect timed out): nothing was sent."""

    nothing_sent = True


class HelperUntrusted(HelperTransportError):
    """The endpoint is not proven to be this user's helper (another user's socket, no or a wrong
    endpoint proof, an unusable token file, a platform without peer credentials): neither the
    token nor the request was sent."""

    nothing_sent = True


class HelperTimeout(HelperTransportError):
    """The helper did not answer in time (a read, a write, or the whole exchange's deadline).
    After the request's first byte the outcome is unknown: never repeated."""


class HelperProtocolError(HelperTransportError):
    """The answer is malformed, oversized, or not what the call expects; the outcome is unknown."""


# ---- an answer: the helper's problem (RFC 9457) ----------------------------------------------


class HelperProblem(HelperError):
    """The helper refused the call with ``application/problem+json``; see the subclasses."""

    code_name: str = ""

    def __init__(self, status: int, code: str, title: str, detail: str, rule: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {detail}" + (f" (rule {rule})" if rule else ""))
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.retry_after = retry_after

    def nothing_happened(self) -> bool:
        """True when the helper says nothing was written and the same call may be sent again."""
        return False

    @property
    def outcome_unknown(self) -> bool:
        return False


class InvalidRequest(HelperProblem):
    """``invalid_request``: the call itself is malformed (a bad run ID, a missing session header)."""

    code_name = "invalid_request"


class InvalidSnapshot(HelperProblem):
    """``invalid_snapshot``: the payload or envelope broke a rule, named by :attr:`rule` (e.g. ``P-CALL-DUP``)."""

    code_name = "invalid_snapshot"

    def __init__(self, status: int, code: str, title: str, detail: str, rule: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(status, code, title, detail, rule, retry_after)
        self.rule = rule or ""


class VerificationFailed(HelperProblem):
    """``verification_failed``: the envelope does not verify here (one identical answer for every cause)."""

    code_name = "verification_failed"


class UnsupportedFormat(HelperProblem):
    """``unsupported_format``: the payload, envelope or record is in a snapshot format this helper
    does not take (unknown, or refused by its policy); the detail names the format. Nothing was
    written."""

    code_name = "unsupported_format"


class Busy(HelperProblem):
    """``busy``: a live owner holds the lock (409: waiting will not help until it stops), or a quota
    was reached (429: nothing happened, retry later)."""

    code_name = "busy"

    @property
    def is_quota(self) -> bool:
        return self.status == 429

    def nothing_happened(self) -> bool:
        return self.retry_after is not None or self.is_quota


class StateConflict(HelperProblem):
    """``state_conflict``: the run is not in a state for this call, or the session does not own it."""

    code_name = "state_conflict"


class Uncertain(HelperProblem):
    """``uncertain``: the outcome is unknown and the run is fenced. Never retried: the host must stop."""

    code_name = "uncertain"

    @property
    def outcome_unknown(self) -> bool:
        return True


class Unavailable(HelperProblem):
    """``unavailable``: nothing was written; the same call may be sent again."""

    code_name = "unavailable"

    def nothing_happened(self) -> bool:
        return True


class Cancelled(HelperProblem):
    """``cancelled``: the helper gave up before its write (nothing happened), except on a sign,
    where cancellation may follow the signing write (wire-format e.4): :attr:`may_follow_write`."""

    code_name = "cancelled"

    def __init__(self, status: int, code: str, title: str, detail: str, rule: str | None = None,
                 retry_after: float | None = None, may_follow_write: bool = False) -> None:
        super().__init__(status, code, title, detail, rule, retry_after)
        self.may_follow_write = may_follow_write

    def nothing_happened(self) -> bool:
        return not self.may_follow_write

    @property
    def outcome_unknown(self) -> bool:
        return self.may_follow_write


class Closing(HelperProblem):
    """``closing``: the helper is shutting down."""

    code_name = "closing"


class NotFound(HelperProblem):
    """``not_found``: no such run, session or import."""

    code_name = "not_found"


class Unauthorized(HelperProblem):
    """``unauthorized``: wrong peer user or bearer token."""

    code_name = "unauthorized"


class Unrecognized(HelperProblem):
    """A code this client does not know (a newer helper): a refusal whose effect is unknown."""

    code_name = ""

    @property
    def outcome_unknown(self) -> bool:
        return True


PROBLEMS: dict[str, type[HelperProblem]] = {
    c.code_name: c for c in (InvalidRequest, InvalidSnapshot, VerificationFailed, UnsupportedFormat, Busy,
                             StateConflict, Uncertain, Unavailable, Cancelled, Closing, NotFound, Unauthorized)
}


def problem(status: int, code: str, title: str, detail: str, rule: str | None, retry_after: float | None,
            signing: bool) -> HelperProblem:
    """The typed problem for ``code``; ``signing``: the answer to a sign (its ``cancelled`` may follow the write)."""
    if code == "cancelled":
        return Cancelled(status, code, title, detail, rule, retry_after, may_follow_write=signing)
    cls = PROBLEMS.get(code, Unrecognized)
    return cls(status, code, title, detail, rule, retry_after)
