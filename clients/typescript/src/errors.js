// Typed failures of the client. A refusal by the helper is a HelperProblem subclass, one per
// stable problem code, named as the Java host library names them (HelperProblem.InvalidRequest,
// …); a failure to talk to the helper is a HelperTransportError subclass.
//
// Guarantees: SECURITY: no message carries a token or a session id (the client replaces the
// session id by "<session>" in whatever the helper echoed); `nothingHappened` is true only where
// the answer proves the same call may simply be sent again.

/** Failing to talk to the helper; `nothingSent` says whether the request can have arrived. */
export class HelperTransportError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }

  /** True when neither the token nor the request left this process. */
  get nothingSent() {
    return false;
  }
}

/** No connection (or nothing sent at all): the call did nothing; safe to repeat. */
export class HelperUnreachable extends HelperTransportError {
  get nothingSent() { return true; }
}

/**
 * The endpoint is not proven to be this user's helper (another user's socket, loose rights, a
 * TCP server without the endpoint proof, a refused token file): nothing was sent to it.
 */
export class HelperUntrusted extends HelperTransportError {
  get nothingSent() { return true; }
}

/** The caller aborted (AbortSignal) before anything of the request was sent. */
export class HelperInterrupted extends HelperTransportError {
  get nothingSent() { return true; }
}

/** No (whole) answer within the deadline after the request was sent: the outcome is unknown. */
export class HelperTimeout extends HelperTransportError {}

/**
 * An answer that is not HTTP, not the expected document, too large, or cut off after the request
 * was sent: the outcome is unknown.
 */
export class HelperProtocolError extends HelperTransportError {}

/**
 * The request may have reached the helper but no answer came (the connection broke while
 * sending or before the answer, or the caller aborted after sending): the outcome is unknown.
 */
export class HelperConnectionLost extends HelperTransportError {}

/**
 * The helper refused a call with an RFC 9457 problem body. Message: `<code>: <detail>` (plus
 * ` (rule R)` for InvalidSnapshot).
 */
export class HelperProblem extends Error {
  /**
   * @param {{status: number, code: string, title: string, detail: string, rule: string|null, retryAfterMs: number|null}} f
   */
  constructor(f) {
    super(`${f.code}: ${f.detail}${f.rule ? ` (rule ${f.rule})` : ''}`);
    this.name = new.target.name;
    /** HTTP status */
    this.status = f.status;
    /** the stable code, e.g. "busy" */
    this.code = f.code;
    this.title = f.title;
    this.detail = f.detail;
  }

  /** True when the helper says nothing was written and the same call may be sent again. */
  get nothingHappened() {
    return false;
  }
}

/** `invalid_request`: the call itself is malformed (a bad run ID, a missing session header). */
export class InvalidRequest extends HelperProblem {}

/** `invalid_snapshot`: the payload or envelope broke a rule of the format, named by `rule`. */
export class InvalidSnapshot extends HelperProblem {
  constructor(f) {
    super(f);
    /** the rule id, e.g. P-CALL-DUP; "" when the helper named none */
    this.rule = f.rule ?? '';
  }
}

/** `verification_failed`: the envelope does not verify here (one identical answer for every cause). */
export class VerificationFailed extends HelperProblem {}

/**
 * `unsupported_format`: the payload, envelope or record is in a snapshot format this helper does
 * not take (unknown, or refused by its policy); the detail names the format. Nothing was written.
 */
export class UnsupportedFormat extends HelperProblem {}

/**
 * `busy`: a live owner holds the run (409: retrying will not help until it stops), or a quota
 * was reached (429: nothing happened).
 */
export class Busy extends HelperProblem {
  constructor(f) {
    super(f);
    /** the helper's Retry-After in milliseconds, or null */
    this.retryAfterMs = f.retryAfterMs;
  }

  get isQuota() {
    return this.status === 429;
  }

  get nothingHappened() {
    return this.retryAfterMs !== null || this.isQuota;
  }
}

/** `state_conflict`: the run is not in a state for this call, or the session does not own it. */
export class StateConflict extends HelperProblem {}

/** `uncertain`: the outcome is unknown and the run is fenced. Never retried: stop the run. */
export class Uncertain extends HelperProblem {}

/** `unavailable`: nothing was written; the same call may be sent again. */
export class Unavailable extends HelperProblem {
  get nothingHappened() { return true; }
}

/**
 * `cancelled`: the helper gave up before its write: nothing happened. Except as the answer to a
 * sign (`mayFollowWrite`): wire-format e.4 lets cancellation follow the signing write.
 */
export class Cancelled extends HelperProblem {
  constructor(f, mayFollowWrite) {
    super(f);
    this.mayFollowWrite = Boolean(mayFollowWrite);
  }

  get nothingHappened() {
    return !this.mayFollowWrite;
  }
}

/** `closing`: the helper is shutting down. */
export class Closing extends HelperProblem {}

/** `not_found`: no such run, session or import. */
export class NotFound extends HelperProblem {}

/** `unauthorized`: wrong peer user or bearer token. */
export class Unauthorized extends HelperProblem {}

/** A code this client does not know (a newer helper): a refusal with unknown effect. */
export class Unrecognized extends HelperProblem {}

const BY_CODE = {
  invalid_request: InvalidRequest,
  invalid_snapshot: InvalidSnapshot,
  verification_failed: VerificationFailed,
  unsupported_format: UnsupportedFormat,
  busy: Busy,
  state_conflict: StateConflict,
  uncertain: Uncertain,
  unavailable: Unavailable,
  closing: Closing,
  not_found: NotFound,
  unauthorized: Unauthorized,
};

/** The typed problem for a code. @param {boolean} signing the answer to a sign */
export function problemOf(f, signing) {
  if (f.code === 'cancelled') return new Cancelled(f, signing);
  const C = Object.hasOwn(BY_CODE, f.code) ? BY_CODE[f.code] : Unrecognized;
  return new C(f);
}

// Java-style access: HelperProblem.Busy, …
Object.assign(HelperProblem, {
  InvalidRequest, InvalidSnapshot, VerificationFailed, UnsupportedFormat, Busy, StateConflict, Uncertain,
  Unavailable, Cancelled, Closing, NotFound, Unauthorized, Unrecognized,
});

/**
 * Whether a failure leaves the outcome of a mutating call unknown (Java's Authority.outcomeUnknown):
 * uncertain, an unrecognized code, a cancelled sign, a timeout, a protocol error or a lost
 * connection; not a clean refusal and not a transport failure before anything was sent.
 * @param {unknown} e
 */
export function outcomeUnknown(e) {
  if (e instanceof Uncertain || e instanceof Unrecognized) return true;
  if (e instanceof Cancelled) return e.mayFollowWrite;
  if (e instanceof HelperProblem) return false;
  if (e instanceof HelperTransportError) return !e.nothingSent;
  return true;
}

// ---- the import order -----------------------------------------------------------------------

/** The import was refused before its consume point; the prepared import was aborted. */
export class ImportRefused extends Error {
  /** @param {string} reason one of ImportRefused.REASONS @param {string} message @param {unknown} [cause] */
  constructor(reason, message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ImportRefused';
    this.reason = reason;
  }
}
ImportRefused.REASONS = Object.freeze(['MALFORMED', 'AUTHORITY_REFUSED', 'NOT_SUSPENDED', 'PLAN_REFUSED', 'CONSUME_REFUSED']);

/**
 * The import's outcome after its consume point is unknown (consume, commit or activate failed):
 * never retried; the run must not execute. `runId` names it.
 */
export class ImportUncertain extends Error {
  /** @param {string} runId @param {string} message @param {unknown} [cause] */
  constructor(runId, message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ImportUncertain';
    this.runId = runId;
  }
}
