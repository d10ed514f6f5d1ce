// The typed client of the helper's HTTP API v1 (RFC 0007's run authority), one method per
// operation. A port of spice.authority.host.AuthorityClient.
//
// Guarantees:
// - A refusal is a HelperProblem subclass per stable code; no connection, a timeout, an
//   unreadable answer or an untrusted endpoint is a HelperTransportError subclass.
// - A call is repeated only when the answer proves nothing happened (unreachable before sending,
//   `unavailable`, `cancelled` except on a sign, `busy` with Retry-After or for a quota): never
//   on `uncertain`, never after a request may have arrived without an answer.
// - SECURITY: no message, toString or inspect output shows a session id or a token.
// - Run IDs that break the one run-ID rule are refused here (TypeError), before anything is sent.
//
// Every method takes a last `options` argument: `signal` (an AbortSignal: an abort before the
// request was sent is HelperInterrupted, nothing done; after, the outcome is unknown) and
// `onAnswer(status, body)` (called with every answer the helper gave, e.g. for metrics or tests).

import { inspect } from 'node:util';
import { HelperInterrupted, HelperProblem, HelperProtocolError, HelperUnreachable, problemOf } from './errors.js';
import { HttpTransport, defaultEndpoint, segment } from './transport.js';
import { parseJson } from './json.js';
import { MAX_ENVELOPE_BYTES } from './envelope.js';
import { MEDIA_TYPE, RUN_ID_RULE, isValidRunId } from './payload.js';

const JSON_TYPE = 'application/json';
const PROTOBUF = 'application/x-protobuf';
const PROBLEM = 'application/problem+json';
const SESSION_HEADER = 'Spice-Session';

/** How often a call is sent again when the answer proves nothing happened. */
export const RetryPolicy = Object.freeze({
  NONE: Object.freeze({ maxAttempts: 1, initialBackoffMs: 0, maxBackoffMs: 0 }),
  DEFAULT: Object.freeze({ maxAttempts: 4, initialBackoffMs: 50, maxBackoffMs: 1000 }),
});

/** The pause before attempt `attempt + 1`, honouring a longer Retry-After up to the maximum. */
export function backoffMs(policy, attempt, retryAfterMs) {
  let d = policy.initialBackoffMs;
  for (let i = 1; i < attempt && d < policy.maxBackoffMs; i++) d *= 2;
  if (retryAfterMs !== null && retryAfterMs !== undefined && retryAfterMs > d) d = retryAfterMs;
  return Math.min(d, policy.maxBackoffMs);
}

const sessionIds = new WeakMap();

/**
 * An open session of this host process. SECURITY: its id is a bearer secret for the process's
 * leases: it is kept out of reach (not a property), never in toString or inspect output.
 */
export class Session {
  /** @param {string} id @param {number} pid */
  constructor(id, pid) {
    sessionIds.set(this, id);
    /** the host process the helper bound this session to */
    this.pid = pid;
    Object.freeze(this);
  }

  toString() {
    return `Session[pid=${this.pid}]`;
  }

  [inspect.custom]() {
    return this.toString();
  }
}

function sessionId(s) {
  const id = sessionIds.get(s);
  if (id === undefined) throw new TypeError('not a Session of this client library');
  return id;
}

function visibleAscii(s) {
  return typeof s === 'string' && s.length > 0 && /^[\x21-\x7e]+$/.test(s);
}

function requireRunId(runId) {
  if (!isValidRunId(runId)) throw new TypeError(`not a run ID: ${RUN_ID_RULE}`);
}

export class AuthorityClient {
  #http;
  #retry;

  /**
   * @param {object} [endpoint] unixEndpoint(…) or tcpEndpoint(…); default: this user's default socket
   * @param {{connectTimeoutMs?: number, readTimeoutMs?: number, retry?: {maxAttempts: number, initialBackoffMs: number, maxBackoffMs: number}, userAgent?: string}} [options]
   */
  constructor(endpoint = defaultEndpoint(), options = {}) {
    if (options.userAgent !== undefined && !visibleAscii(options.userAgent)) {
      throw new TypeError('user agent must be visible ASCII without spaces');
    }
    const retry = options.retry ?? RetryPolicy.DEFAULT;
    if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1 || retry.maxAttempts > 100) {
      throw new RangeError('maxAttempts must be 1..100');
    }
    if (!(retry.initialBackoffMs >= 0) || !(retry.maxBackoffMs >= retry.initialBackoffMs)) {
      throw new RangeError('backoff must be 0 <= initialBackoffMs <= maxBackoffMs');
    }
    this.#http = new HttpTransport(endpoint, options);
    this.#retry = retry;
  }

  get endpoint() {
    return this.#http.endpoint;
  }

  toString() {
    return `AuthorityClient[${this.#http.endpoint.display}]`;
  }

  [inspect.custom]() {
    return this.toString();
  }

  // ---- sessions ---------------------------------------------------------------------------

  /** POST /v1/sessions: a session bound to process `pid` (default: this one). */
  async openSession(options = {}) {
    const pid = options.pid ?? process.pid;
    if (!Number.isSafeInteger(pid) || pid < 2) throw new RangeError('pid must be a process id other than init');
    const o = this.#object(await this.#call('POST', '/v1/sessions', null, JSON_TYPE, JSON_TYPE, Buffer.from(`{"pid":${pid}}`), options));
    if (!visibleAscii(o.session)) throw this.#unexpected('no session');
    return new Session(o.session, typeof o.pid === 'bigint' ? Number(o.pid) : pid);
  }

  /** DELETE /v1/sessions/{session}: the helper releases its leases and imports. */
  async closeSession(session, options = {}) {
    await this.#call('DELETE', `/v1/sessions/${segment(sessionId(session))}`, session, null, JSON_TYPE, null, options);
  }

  // ---- authority and runs -----------------------------------------------------------------

  /** GET /v1/authority: scope, key generation, state, counts; `json` is the helper's document. */
  async authority(options = {}) {
    const body = await this.#call('GET', '/v1/authority', null, null, JSON_TYPE, null, options);
    const a = this.#object(body);
    try {
      const byPhase = {};
      for (const [k, v] of Object.entries(a.runs_by_phase)) byPhase[k] = num(v);
      return Object.freeze({
        scopeId: str(a.scope_id), keyGeneration: u64(a.key_generation), state: str(a.state),
        directory: typeof a.directory === 'string' ? a.directory : null,
        endpoint: typeof a.endpoint === 'string' ? a.endpoint : null,
        sessions: num(a.sessions), ownedRuns: num(a.owned_runs), imports: num(a.imports), leases: num(a.leases),
        runsByPhase: Object.freeze(byPhase), unreadableRecords: num(a.unreadable_records),
        json: body.toString('utf8'),
      });
    } catch {
      throw this.#unexpected('not an authority view');
    }
  }

  /** GET /v1/runs: every run with a verified record. */
  async runs(options = {}) {
    const v = this.#parse(await this.#call('GET', '/v1/runs', null, null, JSON_TYPE, null, options));
    if (!Array.isArray(v)) throw this.#unexpected('not a run list');
    return Object.freeze(v.map((r) => this.#runView(r)));
  }

  /** GET /v1/runs/{run_id}. */
  async run(runId, options = {}) {
    return this.#runAnswer(await this.#call('GET', runPath(runId), null, null, JSON_TYPE, null, options));
  }

  /** POST /v1/runs: durable ACTIVE at generation 1, the lease to `session`. */
  async start(session, runId, options = {}) {
    requireRunId(runId);
    const body = Buffer.from(JSON.stringify({ run_id: runId }), 'utf8');
    return this.#runAnswer(await this.#call('POST', '/v1/runs', session, JSON_TYPE, JSON_TYPE, body, options));
  }

  /**
   * POST /v1/runs/{run_id}/snapshots: the v1alpha2 payload in, the signed envelope (binary
   * protobuf) out. The identical payload of a SUSPENDED run gives the identical envelope again, to
   * any session: a lost answer is recovered by signing again. A `cancelled` answer is not
   * repeated (Cancelled.mayFollowWrite): wire-format e.4 lets it follow the signing write.
   * @param {Uint8Array|{canonical: Uint8Array}} payload the payload bytes, or a decoded snapshot
   * @returns {Promise<Uint8Array>}
   */
  async sign(session, runId, payload, options = {}) {
    const bytes = payload instanceof Uint8Array ? payload : payload?.canonical;
    if (!(bytes instanceof Uint8Array)) throw new TypeError('payload must be bytes or a decoded snapshot');
    const body = await this.#call('POST', `${runPath(runId)}/snapshots`, session, MEDIA_TYPE, PROTOBUF, bytes, options, true);
    return new Uint8Array(body);
  }

  /** POST /v1/runs/{run_id}/resume: local resume, ACTIVE at the next generation. */
  async resume(session, runId, options = {}) {
    return this.#runAnswer(await this.#call('POST', `${runPath(runId)}/resume`, session, null, JSON_TYPE, null, options));
  }

  /** DELETE /v1/runs/{run_id}/lease: the host stopped; nothing is written. */
  async release(session, runId, options = {}) {
    await this.#call('DELETE', `${runPath(runId)}/lease`, session, null, JSON_TYPE, null, options);
  }

  /** POST /v1/runs/{run_id}/abandon: operator action on an orphan: a CANCELLED tombstone. */
  async abandon(session, runId, options = {}) {
    return this.#runAnswer(await this.#call('POST', `${runPath(runId)}/abandon`, session, null, JSON_TYPE, null, options));
  }

  // ---- imports ----------------------------------------------------------------------------

  /**
   * POST /v1/imports: verify the envelope and lock the run for this session's import.
   * @returns {Promise<{importId: string, runId: string, lastSequence: bigint, nextSequence: bigint}>}
   */
  async prepareImport(session, envelope, options = {}) {
    if (!(envelope instanceof Uint8Array)) throw new TypeError('envelope must be a Uint8Array');
    const o = this.#object(await this.#call('POST', '/v1/imports', session, PROTOBUF, JSON_TYPE, envelope, options));
    try {
      if (!visibleAscii(o.import)) throw new Error();
      return Object.freeze({ importId: o.import, runId: str(o.run_id), lastSequence: u64(o.last_sequence), nextSequence: u64(o.next_sequence) });
    } catch {
      throw this.#unexpected('not an import');
    }
  }

  /** POST /v1/imports/{import}/consume: durable IMPORTING, the consume point. */
  async consume(session, tx, options = {}) {
    return this.#runAnswer(await this.#call('POST', `${importPath(tx)}/consume`, session, null, JSON_TYPE, null, options));
  }

  /** POST /v1/imports/{import}/activate: durable ACTIVE; the run's lease is now this session's. */
  async activate(session, tx, options = {}) {
    return this.#runAnswer(await this.#call('POST', `${importPath(tx)}/activate`, session, null, JSON_TYPE, null, options));
  }

  /** DELETE /v1/imports/{import}: clean before consume; after it, `uncertain`. */
  async abortImport(session, tx, options = {}) {
    await this.#call('DELETE', importPath(tx), session, null, JSON_TYPE, null, options);
  }

  /** POST /v1/snapshots/inspect: the structural view of an envelope (never says it is authentic). */
  async inspect(envelope, options = {}) {
    if (!(envelope instanceof Uint8Array)) throw new TypeError('envelope must be a Uint8Array');
    return this.#parse(await this.#call('POST', '/v1/snapshots/inspect', null, PROTOBUF, JSON_TYPE, envelope, options));
  }

  // ---- plumbing ---------------------------------------------------------------------------

  async #call(method, target, session, contentType, accept, body, options, signing = false) {
    const headers = { Accept: `${accept}, ${PROBLEM}` };
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (session !== null) headers[SESSION_HEADER] = sessionId(session);
    const signal = options.signal;
    for (let attempt = 1; ; attempt++) {
      let retryAfterMs = null;
      try {
        const r = await this.#http.send({ method, target, headers, body, signal, maxBody: signing ? MAX_ENVELOPE_BYTES : undefined });
        options.onAnswer?.(r.status, r.body);
        if (r.status >= 200 && r.status < 300) return r.body;
        throw this.#problem(r, session, signing);
      } catch (e) {
        if (e instanceof HelperUnreachable) {
          // Nothing was sent: repeating cannot do anything twice.
          if (attempt >= this.#retry.maxAttempts) throw e;
        } else if (e instanceof HelperProblem) {
          // SECURITY: only an answer that proves nothing happened is repeated; uncertain never is.
          if (!e.nothingHappened || attempt >= this.#retry.maxAttempts) throw e;
          retryAfterMs = e.retryAfterMs ?? null;
        } else {
          throw e;
        }
      }
      await pause(backoffMs(this.#retry, attempt, retryAfterMs), signal);
    }
  }

  #problem(r, session, signing) {
    const reason = r.reason === '' ? '(no reason given)' : r.reason;
    let p = {};
    try {
      const v = parseJson(r.body);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) p = v;
    } catch {
      // not a problem body
    }
    if (typeof p.code !== 'string') return this.#unexpected(`HTTP ${r.status} ${reason}`);
    let detail = typeof p.detail === 'string' ? p.detail : reason;
    let title = typeof p.title === 'string' ? p.title : '';
    if (session !== null) {
      // SECURITY: the session id never reaches a message, even if the helper echoed it.
      const id = sessionId(session);
      detail = detail.split(id).join('<session>');
      title = title.split(id).join('<session>');
    }
    const rule = typeof p.rule === 'string' ? p.rule : null;
    const ra = r.headers.get('retry-after');
    const retryAfterMs = ra !== undefined && /^[0-9]{1,6}$/.test(ra) ? Number(ra) * 1000 : null;
    return problemOf({ status: r.status, code: p.code, title, detail, rule, retryAfterMs }, signing);
  }

  #runAnswer(body) {
    return this.#runView(this.#parse(body));
  }

  #runView(o) {
    if (o !== null && typeof o === 'object' && typeof o.run_id === 'string' && typeof o.phase === 'string' && o.phase !== ''
      && typeof o.run_generation === 'bigint' && o.run_generation >= 0n
      && (o.owned === undefined || typeof o.owned === 'boolean') && (o.fenced === undefined || typeof o.fenced === 'boolean')) {
      return Object.freeze({ runId: o.run_id, phase: o.phase, runGeneration: o.run_generation, owned: o.owned === true, fenced: o.fenced === true });
    }
    throw this.#unexpected('not a run');
  }

  #parse(body) {
    try {
      return parseJson(body);
    } catch {
      throw this.#unexpected('malformed JSON');
    }
  }

  #object(body) {
    const v = this.#parse(body);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw this.#unexpected('not a JSON object');
    return v;
  }

  #unexpected(what) {
    return new HelperProtocolError(`unexpected response from the helper at ${this.#http.endpoint.display}: ${what}`);
  }
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      // Only a call whose last answer proved nothing happened is waited on: still nothing done.
      reject(new HelperInterrupted('aborted while waiting to repeat a call that did nothing'));
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(new HelperInterrupted('aborted while waiting to repeat a call that did nothing'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function runPath(runId) {
  requireRunId(runId);
  return `/v1/runs/${segment(runId)}`;
}

function importPath(tx) {
  if (!tx || !visibleAscii(tx.importId)) throw new TypeError('not an import');
  return `/v1/imports/${segment(tx.importId)}`;
}

function str(v) {
  if (typeof v !== 'string') throw new Error('not a string');
  return v;
}

function u64(v) {
  if (typeof v !== 'bigint' || v < 0n || v > 0xffffffffffffffffn) throw new Error('not unsigned 64-bit');
  return v;
}

function num(v) {
  if (typeof v !== 'bigint' || v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('not a count');
  return Number(v);
}
