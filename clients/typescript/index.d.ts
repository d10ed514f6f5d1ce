// Type declarations of @spice-authority/client (the package is plain ESM JavaScript; this file
// is checked with `tsc --noEmit`, see tsconfig.json, and its export names are checked against the
// runtime's by test/types.test.js).

// ---- errors ---------------------------------------------------------------------------------

/** Failing to talk to the helper. */
export class HelperTransportError extends Error {
  /** True when neither the token nor the request left this process. */
  readonly nothingSent: boolean;
}
/** No connection, nothing sent: the call did nothing (retried by the client). */
export class HelperUnreachable extends HelperTransportError {}
/** The endpoint is not proven to be this user's helper; nothing was sent to it. */
export class HelperUntrusted extends HelperTransportError {}
/** Aborted (AbortSignal) before anything of the request was sent. */
export class HelperInterrupted extends HelperTransportError {}
/** No whole answer within the deadline after sending: the outcome is unknown. */
export class HelperTimeout extends HelperTransportError {}
/** Not HTTP, not the expected document, too large, or cut off: the outcome is unknown. */
export class HelperProtocolError extends HelperTransportError {}
/** The connection broke after the request may have arrived: the outcome is unknown. */
export class HelperConnectionLost extends HelperTransportError {}

export interface ProblemFields {
  status: number;
  code: string;
  title: string;
  detail: string;
  rule: string | null;
  retryAfterMs: number | null;
}

/** The helper refused with an RFC 9457 problem; one subclass per stable code. */
export class HelperProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  /** True when the helper says nothing was written and the same call may be sent again. */
  readonly nothingHappened: boolean;
  static readonly InvalidRequest: typeof InvalidRequest;
  static readonly InvalidSnapshot: typeof InvalidSnapshot;
  static readonly VerificationFailed: typeof VerificationFailed;
  static readonly UnsupportedFormat: typeof UnsupportedFormat;
  static readonly Busy: typeof Busy;
  static readonly StateConflict: typeof StateConflict;
  static readonly Uncertain: typeof Uncertain;
  static readonly Unavailable: typeof Unavailable;
  static readonly Cancelled: typeof Cancelled;
  static readonly Closing: typeof Closing;
  static readonly NotFound: typeof NotFound;
  static readonly Unauthorized: typeof Unauthorized;
  static readonly Unrecognized: typeof Unrecognized;
}
export class InvalidRequest extends HelperProblem {}
export class InvalidSnapshot extends HelperProblem {
  /** e.g. "P-CALL-DUP"; "" when the helper named none */
  readonly rule: string;
}
export class VerificationFailed extends HelperProblem {}
/** The snapshot format is not one this helper takes; the detail names it. Nothing was written. */
export class UnsupportedFormat extends HelperProblem {}
export class Busy extends HelperProblem {
  readonly retryAfterMs: number | null;
  readonly isQuota: boolean;
}
export class StateConflict extends HelperProblem {}
export class Uncertain extends HelperProblem {}
export class Unavailable extends HelperProblem {}
export class Cancelled extends HelperProblem {
  /** True for the answer to a sign: cancellation may follow the signing write (outcome unknown). */
  readonly mayFollowWrite: boolean;
}
export class Closing extends HelperProblem {}
export class NotFound extends HelperProblem {}
export class Unauthorized extends HelperProblem {}
export class Unrecognized extends HelperProblem {}

/** Whether a failure leaves the outcome of a mutating call unknown. */
export function outcomeUnknown(e: unknown): boolean;

export type ImportRefusedReason = 'MALFORMED' | 'AUTHORITY_REFUSED' | 'NOT_SUSPENDED' | 'PLAN_REFUSED' | 'CONSUME_REFUSED';
/** Refused before the consume point; the prepared import was aborted. */
export class ImportRefused extends Error {
  readonly reason: ImportRefusedReason;
  static readonly REASONS: readonly ImportRefusedReason[];
}
/** The outcome after the consume point is unknown: never retried; the run must not execute. */
export class ImportUncertain extends Error {
  readonly runId: string;
}

// ---- endpoints and transport ----------------------------------------------------------------

export interface UnixEndpoint { readonly kind: 'unix'; readonly socket: string; readonly display: string }
export interface TcpEndpoint { readonly kind: 'tcp'; readonly host: string; readonly port: number; readonly tokenFile: string; readonly display: string }
export type Endpoint = UnixEndpoint | TcpEndpoint;

export function unixEndpoint(socketPath: string): UnixEndpoint;
/** `host`: an IP literal of 127.0.0.0/8 or ::1; never a name. */
export function tcpEndpoint(o: { host: string; port: number; tokenFile: string }): TcpEndpoint;
export function defaultEndpoint(): UnixEndpoint;
export function defaultEndpointDirectory(env?: Record<string, string | undefined>, uid?: number, platform?: string): string | null;
/** The file-system proof that this user's process serves the socket (throws HelperUntrusted/HelperUnreachable). */
export function checkUnixEndpoint(socketPath: string, display?: string): { path: string; dev: number; ino: number };
/** The bearer token under the TokenFiles rules; the caller zeroes the buffer. */
export function readTokenFile(file: string): Uint8Array;
export function endpointProofMac(token: Uint8Array, nonce: Uint8Array, address: string, port: number): Uint8Array;
export function verifyEndpointProof(token: Uint8Array, nonce: Uint8Array, address: string, port: number, body: Uint8Array): void;
export const MAX_HEAD_BYTES: number;
export const MAX_BODY_BYTES: number;
export const EXCHANGE_READ_TIMEOUTS: number;

// ---- the client -----------------------------------------------------------------------------

export interface RetryPolicyValue { readonly maxAttempts: number; readonly initialBackoffMs: number; readonly maxBackoffMs: number }
export const RetryPolicy: { readonly NONE: RetryPolicyValue; readonly DEFAULT: RetryPolicyValue };
export function backoffMs(policy: RetryPolicyValue, attempt: number, retryAfterMs: number | null): number;

export interface ClientOptions {
  connectTimeoutMs?: number;
  /** each read and write; the whole exchange gets 12 of them */
  readTimeoutMs?: number;
  retry?: RetryPolicyValue;
  userAgent?: string;
}
export interface CallOptions {
  /** aborted before sending: HelperInterrupted; after: the outcome is unknown */
  signal?: AbortSignal;
  /** every answer the helper gave (status and body) */
  onAnswer?: (status: number, body: Uint8Array) => void;
}

/** An open session; its id is never shown (toString: Session[pid=N]). */
export class Session {
  constructor(id: string, pid: number);
  readonly pid: number;
}

export interface RunView {
  readonly runId: string;
  /** ACTIVE, SUSPENDED, IMPORTING, COMPLETED, FAILED, CANCELLED (text: a newer helper may add one) */
  readonly phase: string;
  readonly runGeneration: bigint;
  readonly owned: boolean;
  readonly fenced: boolean;
}
export interface ImportView {
  readonly importId: string;
  readonly runId: string;
  readonly lastSequence: bigint;
  readonly nextSequence: bigint;
}
export interface AuthorityView {
  readonly scopeId: string;
  readonly keyGeneration: bigint;
  readonly state: string;
  readonly directory: string | null;
  readonly endpoint: string | null;
  readonly sessions: number;
  readonly ownedRuns: number;
  readonly imports: number;
  readonly leases: number;
  readonly runsByPhase: Readonly<Record<string, number>>;
  readonly unreadableRecords: number;
  /** the helper's document as it is */
  readonly json: string;
}

export class AuthorityClient {
  constructor(endpoint?: Endpoint, options?: ClientOptions);
  readonly endpoint: Endpoint;
  openSession(options?: CallOptions & { pid?: number }): Promise<Session>;
  closeSession(session: Session, options?: CallOptions): Promise<void>;
  authority(options?: CallOptions): Promise<AuthorityView>;
  runs(options?: CallOptions): Promise<readonly RunView[]>;
  run(runId: string, options?: CallOptions): Promise<RunView>;
  start(session: Session, runId: string, options?: CallOptions): Promise<RunView>;
  /** the signed envelope (binary protobuf) */
  sign(session: Session, runId: string, payload: Uint8Array | Snapshot, options?: CallOptions): Promise<Uint8Array>;
  resume(session: Session, runId: string, options?: CallOptions): Promise<RunView>;
  release(session: Session, runId: string, options?: CallOptions): Promise<void>;
  abandon(session: Session, runId: string, options?: CallOptions): Promise<RunView>;
  prepareImport(session: Session, envelope: Uint8Array, options?: CallOptions): Promise<ImportView>;
  consume(session: Session, tx: ImportView, options?: CallOptions): Promise<RunView>;
  activate(session: Session, tx: ImportView, options?: CallOptions): Promise<RunView>;
  abortImport(session: Session, tx: ImportView, options?: CallOptions): Promise<void>;
  /** the structural view (integers as bigint); never says the claim is authentic */
  inspect(envelope: Uint8Array, options?: CallOptions): Promise<unknown>;
}

// ---- payloads -------------------------------------------------------------------------------

export const FORMAT: 'spice.agent.snapshot/v1alpha2';
export const MEDIA_TYPE: 'application/vnd.spice.snapshot.v1alpha2+json';
export const MAX_PAYLOAD_BYTES: number;
export const RUN_ID_RULE: string;
/** Rule id to its content-free reason, e.g. 'P-CALL-DUP'. */
export const PAYLOAD_RULES: Readonly<Record<string, string>>;

export class PayloadRejected extends Error {
  readonly rule: string;
  readonly where: string | null;
}

/** One raw JSON value (a part's data), exact bytes; written compacted as Go does. */
export class RawJson {
  static parse(json: string | Uint8Array): RawJson;
  /** Go's encoding of a JS value (floats as Go's float64, -0 as "-0", bigint as integers). */
  static of(value: unknown): RawJson;
  bytes(): Uint8Array;
  readonly length: number;
  compact(): Uint8Array;
}

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export type Status = 'suspended' | 'completed' | 'failed' | 'cancelled';
export type Part =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call' | 'tool_result'; name: string; callId: string; data: RawJson }
  | { kind: 'extension'; namespace: string; data: RawJson };
export type PartInit =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call' | 'tool_result'; name: string; callId: string; data: unknown }
  | { kind: 'extension'; namespace: string; data: unknown };
export interface Message { readonly id: string; readonly role: Role; readonly parts: readonly Part[] }
export interface PlanIdentity {
  readonly compiledIdentities: readonly string[];
  readonly snapshotCompatibilityIdentity: string;
  readonly toolPlanId: string;
  readonly fingerprint: string;
}
export interface Definition { readonly name: string; readonly model: string; readonly maxTurns: number }

/** A validated, canonical v1alpha2 payload; `canonical` are exactly its bytes. */
export interface Snapshot {
  readonly version: string;
  readonly runId: string;
  readonly definition: Definition;
  readonly completedTurns: number;
  readonly history: readonly Message[];
  readonly planIdentity: PlanIdentity;
  readonly seenInteractionIds: readonly string[];
  /** unsigned 64-bit */
  readonly lastSequence: bigint;
  readonly status: Status;
  readonly canonical: Uint8Array;
}

export type Validation =
  | { ok: true; snapshot: Snapshot }
  | { ok: false; rule: string; where: string | null; reason: string };

/** @throws {PayloadRejected} */
export function decodeSnapshot(payload: Uint8Array | string): Snapshot;
export function validatePayload(payload: Uint8Array | string): Validation;
/** The canonical re-encoding of a payload the Go kernel accepts. @throws {PayloadRejected} */
export function canonicalize(payload: Uint8Array | string): Uint8Array;
export function isValidRunId(s: unknown): boolean;

export class SnapshotBuilder {
  runId(runId: string): this;
  definition(d: Definition): this;
  completedTurns(turns: number): this;
  addMessage(m: { id: string; role: string; parts: readonly PartInit[] }): this;
  planIdentity(p: PlanIdentity): this;
  seenInteractionIds(ids: readonly string[]): this;
  lastSequence(seq: bigint | number | string): this;
  status(status: Status): this;
  /** @throws {PayloadRejected} */
  build(): Snapshot;
}

// ---- plan identity --------------------------------------------------------------------------

export const PLAN_DOMAIN: 'spice-agent-plan/v2';
export type Effect = 'read_only' | 'mutating';
export type ReplaySafety = 'safe' | 'idempotent' | 'unsafe';
export type Capability = 'filesystem.read' | 'filesystem.write' | 'process.execute' | 'network.access'
  | 'secrets.read' | 'environment.read' | 'environment.write';
export interface ToolDefinitionInit {
  name: string;
  description: string;
  /** exactly as supplied (not compacted) */
  inputSchema: Uint8Array | string;
  effect: Effect;
  replaySafety: ReplaySafety;
  capabilities: readonly Capability[];
}
export class ToolDefinition {
  constructor(d: ToolDefinitionInit);
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Uint8Array;
  readonly effect: Effect;
  readonly replaySafety: ReplaySafety;
  readonly capabilities: readonly Capability[];
}
type Tool = ToolDefinition | ToolDefinitionInit;
export function toolFingerprint(tool: Tool): string;
export function staticToolPlanId(tools: readonly Tool[]): string;
export function planFingerprint(compiledIdentities: readonly string[], toolPlanId: string, compatibilityIdentity: string, tools: readonly Tool[]): string;
export function planIdentity(compiledIdentities: readonly string[], toolPlanId: string, compatibilityIdentity: string, tools: readonly Tool[]): PlanIdentity;
/** Recomputes the recorded fingerprint from the tools leased now; constant-time compare. */
export function planMatches(recorded: PlanIdentity, leasedTools: readonly Tool[]): boolean;

// ---- envelopes ------------------------------------------------------------------------------

export const MAX_ENVELOPE_BYTES: number;
export class EnvelopeRejected extends Error {
  /** E-FORMAT, E-RUNID, E-SEQ, E-LIFECYCLE, E-PAYLOAD-SIZE, E-DIGEST, E-AUTH-SHAPE, E-PROTO, E-SIZE */
  readonly rule: string;
}
export interface Envelope {
  readonly format: string;
  readonly runId: string;
  readonly lastSequence: bigint;
  readonly lifecycle: number;
  readonly status: Status;
  readonly payload: Uint8Array;
  readonly sha256: Uint8Array;
  readonly authority: { readonly scopeId: Uint8Array; readonly generation: bigint; readonly hmacSha256: Uint8Array };
}
/** Structure only (a.3): never a proof of authenticity. */
export function parseEnvelope(bytes: Uint8Array): Envelope;
export function macInput(f: { scopeId: Uint8Array; generation: bigint; format: string; runId: string; lastSequence: bigint; lifecycle: number; sha256: Uint8Array }): Uint8Array;
export function lengthPrefixed(components: ReadonlyArray<Uint8Array | string>): Uint8Array;

// ---- the import order -----------------------------------------------------------------------

export interface ImportRunOptions<R> {
  client: AuthorityClient;
  session: Session;
  envelope: Uint8Array;
  /** after prepare, before consume; throw to refuse (the import is then aborted) */
  checkPlan(snapshot: Snapshot, tx: ImportView): unknown;
  /** after consume: commit the run (not executing yet) and return its handle */
  commit(snapshot: Snapshot, tx: ImportView): R | Promise<R>;
  /** when activate fails: stop and join the committed run (awaited before the import is released) */
  stop(run: R): unknown;
  signal?: AbortSignal;
}
/**
 * prepare, checkPlan, consume, commit, activate.
 * @throws {ImportRefused} before the consume point (aborted)
 * @throws {ImportUncertain} from the consume point on (never retried)
 */
export function importRun<R>(o: ImportRunOptions<R>): Promise<{ snapshot: Snapshot; tx: ImportView; run: R; view: RunView }>;

/**
 * The reference engine's plan check as a `checkPlan`: non-empty and equal compatibility identity,
 * equal compiled identities, the recorded plan leased by ID and its identity recomputed.
 */
export function planCheck(host: {
  compatibilityIdentity: string;
  compiledIdentities: readonly string[];
  lease(toolPlanId: string): readonly Tool[] | Promise<readonly Tool[]>;
}): (snapshot: Snapshot) => Promise<readonly Tool[]>;
