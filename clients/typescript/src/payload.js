// The v1alpha2 payload: Go-equivalent decoding (wire-format.md b.3), the rules in the reference's
// check order (b.4-b.6), the canonical encoder (b.1-b.2) and this project's stricter P-CANONICAL.
// A port of spice.authority.snapshot.payload (PayloadDecoder, PayloadRules, PayloadEncoder).
//
// Guarantees: validate() reports the first broken rule by the same id as
// `spice-authority snapshot validate`; P-CANONICAL only when no more specific rule is broken.
// Sequences are unsigned 64-bit and handled as BigInt, never as lossy JS numbers.

import {
  GoJsonReader, GoJsonWriter, JsonSyntaxError, compareUtf8, containsGoControl, containsGoSpace,
  isLowerHex, isOneValue, isToken, isTrimmedNonEmpty, isValidUnicode, matchField, utf8Exact, utf8Length,
} from './gojson.js';

export const FORMAT = 'spice.agent.snapshot/v1alpha2';
export const MEDIA_TYPE = 'application/vnd.spice.snapshot.v1alpha2+json';
const MIB = 1 << 20;
export const MAX_PAYLOAD_BYTES = 16 * MIB;
const MAX_MESSAGE = 4 * MIB;
const MAX_PARTS = 128;
const MAX_MESSAGES = 4096;
const MAX_INTERACTIONS = 4096;
const MAX_COMPILED = 512;
const MAX_TURNS = 1000;
const MAX_U32 = 0xffffffffn;
const MAX_U64 = 0xffffffffffffffffn;
export const RUN_ID_MAX_BYTES = 96;
export const RUN_ID_RULE = 'run_id must be a token of at most 96 UTF-8 bytes of valid Unicode text without control characters';

/** The rule ids and their content-free reasons, as the Java PayloadRule enum has them. */
export const PAYLOAD_RULES = Object.freeze({
  'P-SIZE': 'payload length must be 1..16777216 bytes',
  'P-JSON': 'payload is not one syntactically valid JSON value',
  'P-TRAILING': 'data follows the JSON value',
  'P-UNKNOWN': "member outside the shape of the payload's format",
  'P-TYPE': 'member has the wrong JSON type or an integer out of range',
  'P-VERSION': 'version must name an accepted snapshot format',
  'P-MSG-ID': 'message id must be a token of at most 128 bytes',
  'P-PART-KIND': 'part kind must be text, tool_call, tool_result or extension',
  'P-PART-INACTIVE': 'part carries a member its kind does not use',
  'P-TEXT': 'text must be non-empty and at most 1 MiB',
  'P-CALL-ID': 'call_id must be a token of at most 128 bytes',
  'P-TOOL-NAME': 'tool name must be a token of at most 128 bytes',
  'P-NAMESPACE': 'extension namespace must be a token of at most 256 bytes',
  'P-DATA': 'data must be present, one JSON value, at most 1 MiB',
  'P-MSG-ROLE': 'role must be system, user, assistant or tool',
  'P-MSG-PARTS': 'a message must have 1..128 parts',
  'P-MSG-SIZE': 'message exceeds 4 MiB',
  'P-DEF-NAME': 'definition.name must be non-empty without surrounding white space',
  'P-DEF-MODEL': 'definition.model must be non-empty without surrounding white space',
  'P-DEF-TURNS': 'definition.max_turns must be 1..1000',
  'P-TOOLPLAN': 'tool_plan_id must be a token of at most 256 bytes without control or white-space characters',
  'P-PLAN-COUNT': 'compiled_identities must hold 1..512 entries',
  'P-PLAN-SORTED': 'compiled_identities must be sorted by UTF-8 bytes',
  'P-PLAN-TOKEN': 'compiled identity must be a token of at most 256 bytes',
  'P-PLAN-DUP': 'compiled identities must be unique',
  'P-PLAN-FORM': 'compiled identity must have the form category:name',
  'P-PLAN-CATEGORY': 'compiled identity category must be provider, stage, observer, broker, tool or decorator',
  'P-COMPAT': 'snapshot_compatibility_identity must be empty or a token of at most 256 bytes',
  'P-FPR': 'fingerprint must be sha256: followed by 64 lowercase hex digits',
  'P-RUNID': RUN_ID_RULE,
  'P-TURNS': 'completed_turns exceeds max_turns',
  'P-HIST-COUNT': 'history must hold 1..4096 messages',
  'P-SEQ': 'last_sequence must be 1..2^64-2',
  'P-STATUS': 'status must be suspended, completed, failed or cancelled',
  'P-SUSPENDED-TURNS': 'suspended requires 1 <= completed_turns <= max_turns-1',
  'P-IA-COUNT': 'at most 4096 seen interaction IDs',
  'P-IA-TOKEN': 'interaction ID must be a token of at most 128 bytes',
  'P-IA-ORDER': 'interaction IDs must be strictly ascending by UTF-8 bytes',
  'P-HIST-FIRST-USER': 'the first message must have role user',
  'P-MSG-ID-DUP': 'message ids must be unique',
  'P-HIST-SIZE': 'history exceeds 16 MiB',
  'P-CALL-ROLE': 'tool_call parts are allowed only in assistant messages',
  'P-CALL-DUP': 'tool call ids must be unique across the history',
  'P-RESULT-ROLE': 'tool_result parts are allowed only in tool messages',
  'P-RESULT-MATCH': 'tool_result must resolve an earlier unresolved call with the same call_id and name',
  'P-UNRESOLVED': 'a tool_call has no result',
  'P-CANONICAL': 'payload is not byte-identical to its canonical encoding',
});

/** A payload broke rule `rule` (e.g. `P-CALL-DUP`) at `where` (e.g. `history[3].parts[0]`). */
export class PayloadRejected extends Error {
  /** @param {string} rule @param {string|null} where */
  constructor(rule, where) {
    super(`${rule} ${PAYLOAD_RULES[rule]}${where ? ` (at ${where})` : ''}`);
    this.name = 'PayloadRejected';
    this.rule = rule;
    this.where = where;
  }
}

/** The one run-ID rule: valid Unicode, token(96), no Go control character. @param {unknown} s */
export function isValidRunId(s) {
  return typeof s === 'string' && isValidUnicode(s) && isToken(s, RUN_ID_MAX_BYTES) && !containsGoControl(s);
}

const ROLES = ['system', 'user', 'assistant', 'tool'];
const STATUSES = ['suspended', 'completed', 'failed', 'cancelled'];
const CATEGORIES = new Set(['provider', 'stage', 'observer', 'broker', 'tool', 'decorator']);

// ---- the Go decoding model ------------------------------------------------------------------

/** A Go slice: `len` visible elements over a backing array that may hold stale ones beyond it. */
function slice() {
  return { backing: [], len: 0, overflow: 0, overflowFailure: null, overflowBytes: 0 };
}
const view = (s) => s.backing.slice(0, s.len);
const count = (s) => s.len + s.overflow;
function resetToEmpty(s) {
  s.backing = [];
  s.len = 0;
  clearOverflow(s);
}
function clearOverflow(s) {
  s.overflow = 0;
  s.overflowFailure = null;
  s.overflowBytes = 0;
}

function rawSnapshot() {
  return {
    version: '', runId: '', runIdSubstituted: false,
    definition: { name: '', model: '', maxTurns: 0n },
    completedTurns: 0n, history: slice(),
    // workspacePresent: v1alpha3's plan_identity.workspace_fingerprint was there (even as null); a
    // v1alpha2 payload must not have it, and its version is then named before other decoding errors.
    plan: { compiledIdentities: slice(), snapshotCompatibilityIdentity: '', toolPlanId: '', fingerprint: '', workspacePresent: false },
    seenInteractionIds: slice(), lastSequence: 0n, status: '',
  };
}
const rawMessage = () => ({ id: '', role: '', parts: slice() });
const rawPart = () => ({ kind: '', text: '', name: '', callId: '', namespace: '', data: null });
const hasData = (p) => p.data !== null && p.data.length > 0;
function resetMessage(m) {
  m.id = ''; m.role = ''; resetToEmpty(m.parts);
  return m;
}
function resetPart(p) {
  p.kind = ''; p.text = ''; p.name = ''; p.callId = ''; p.namespace = ''; p.data = null;
  return p;
}

const SNAPSHOT_FIELDS = ['version', 'run_id', 'definition', 'completed_turns', 'history', 'plan_identity',
  'seen_interaction_ids', 'last_sequence', 'status'];
const DEFINITION_FIELDS = ['name', 'model', 'max_turns'];
const MESSAGE_FIELDS = ['id', 'role', 'parts'];
const PART_FIELDS = ['kind', 'text', 'name', 'call_id', 'namespace', 'data'];
// Both formats' plan members, as the Java decoder reads them: v1alpha3's workspace_fingerprint is
// recognised so that a v1alpha2 payload carrying it is refused for its version, as Java does.
const PLAN_FIELDS = ['compiled_identities', 'snapshot_compatibility_identity', 'tool_plan_id', 'fingerprint',
  'workspace_fingerprint'];

// Like the Java decoder, a type error inside workspace_fingerprint is kept apart from the others
// (workspaceSaved): the order of the rules depends on whether that member is present (decodeRaw).
class Decoder {
  constructor(bytes) {
    this.r = new GoJsonReader(bytes);
    this.saved = null;
    this.savedAt = null;
    this.savedOrder = 0;
    this.workspaceSaved = null;
    this.workspaceOrder = 0;
    this.inWorkspace = false;
    this.errors = 0;
    this.curMessage = 0;
    this.curPart = 0;
    this.curElement = 0;
  }

  save(rule, where) {
    this.errors++;
    if (this.inWorkspace) {
      if (this.workspaceSaved === null) {
        this.workspaceSaved = rule;
        this.workspaceOrder = this.errors;
      }
      return;
    }
    if (this.saved === null) {
      this.saved = rule;
      this.savedOrder = this.errors;
      this.savedAt = where.replace('%m', String(this.curMessage)).replace('%p', String(this.curPart))
        .replace('%i', String(this.curElement));
    }
  }

  /** Whether the first error outside the workspace member came before the first inside it. */
  savedFirst() {
    return this.saved !== null && (this.workspaceSaved === null || this.savedOrder < this.workspaceOrder);
  }

  typeMismatch(where) {
    this.save('P-TYPE', where);
    this.r.skipValue();
  }

  unknown(where) {
    this.save('P-UNKNOWN', where);
    this.r.skipValue();
  }

  string(current, where) {
    const kind = this.r.peekKind();
    if (kind === '"') return this.r.readString();
    if (kind === 'n') { this.r.readNull(); return current; }
    this.typeMismatch(where);
    return current;
  }

  unsigned(current, max, where) {
    const kind = this.r.peekKind();
    if (kind === '0') {
      const v = this.r.readNumberAsUnsigned();
      if (v === null || v > max) {
        this.save('P-TYPE', where);
        return current;
      }
      return v;
    }
    if (kind === 'n') { this.r.readNull(); return current; }
    this.typeMismatch(where);
    return current;
  }

  openObject(where) {
    const kind = this.r.peekKind();
    if (kind === '{') { this.r.beginObject(); return true; }
    if (kind === 'n') { this.r.readNull(); return false; }
    this.typeMismatch(where);
    return false;
  }

  /** Go's array-into-slice decoding with element reuse; elements past `retain` only counted and checked. */
  slice(s, zero, element, where, retain, onOverflow, reset) {
    const kind = this.r.peekKind();
    if (kind === 'n') { this.r.readNull(); resetToEmpty(s); return; }
    if (kind !== '[') { this.typeMismatch(where); return; }
    this.r.beginArray();
    clearOverflow(s);
    let scratch = null;
    let i = 0;
    let first = true;
    while (this.r.nextElement(first)) {
      first = false;
      this.curElement = i;
      if (i < retain) {
        if (i >= s.backing.length) s.backing.push(zero());
        if (i >= s.len) s.len = i + 1;
        s.backing[i] = element(s.backing[i], i);
      } else {
        scratch = scratch === null || reset === null ? zero() : reset(scratch);
        scratch = element(scratch, i);
        s.overflow++;
        if (onOverflow) onOverflow(s, scratch, i);
      }
      i++;
    }
    const retained = Math.min(i, retain);
    if (retained < s.len) s.len = retained;
    if (i === 0) resetToEmpty(s);
  }

  decode() {
    const s = rawSnapshot();
    if (!this.openObject('$')) return s;
    let key;
    let first = true;
    while ((key = this.r.nextMember(first)) !== null) {
      first = false;
      switch (matchField(key, SNAPSHOT_FIELDS)) {
        case 0: s.version = this.string(s.version, 'version'); break;
        case 1:
          if (this.r.peekKind() === '"') {
            s.runId = this.r.readString();
            s.runIdSubstituted = this.r.substituted;
          } else {
            s.runId = this.string(s.runId, 'run_id');
          }
          break;
        case 2: this.definition(s.definition); break;
        case 3: s.completedTurns = this.unsigned(s.completedTurns, MAX_U32, 'completed_turns'); break;
        case 4:
          this.slice(s.history, rawMessage, (m, i) => this.message(m, i), 'history', MAX_MESSAGES,
            messageOverflow, resetMessage);
          break;
        case 5: this.plan(s.plan); break;
        case 6:
          this.slice(s.seenInteractionIds, () => '', (cur) => this.string(cur, 'seen_interaction_ids[%i]'),
            'seen_interaction_ids', MAX_INTERACTIONS, null, null);
          break;
        case 7: s.lastSequence = this.unsigned(s.lastSequence, MAX_U64, 'last_sequence'); break;
        case 8: s.status = this.string(s.status, 'status'); break;
        default: this.unknown('$');
      }
    }
    return s;
  }

  definition(d) {
    if (!this.openObject('definition')) return;
    let key;
    let first = true;
    while ((key = this.r.nextMember(first)) !== null) {
      first = false;
      switch (matchField(key, DEFINITION_FIELDS)) {
        case 0: d.name = this.string(d.name, 'definition.name'); break;
        case 1: d.model = this.string(d.model, 'definition.model'); break;
        case 2: d.maxTurns = this.unsigned(d.maxTurns, MAX_U32, 'definition.max_turns'); break;
        default: this.unknown('definition');
      }
    }
  }

  message(m, index) {
    this.curMessage = index;
    if (!this.openObject('history[%m]')) return m;
    let key;
    let first = true;
    while ((key = this.r.nextMember(first)) !== null) {
      first = false;
      switch (matchField(key, MESSAGE_FIELDS)) {
        case 0: m.id = this.string(m.id, 'history[%m].id'); break;
        case 1: m.role = this.string(m.role, 'history[%m].role'); break;
        case 2:
          this.slice(m.parts, rawPart, (p, pi) => this.part(p, pi), 'history[%m].parts', MAX_PARTS,
            (s, p, pi) => this.partOverflow(s, p, pi), resetPart);
          this.curMessage = index;
          break;
        default: this.unknown('history[%m]');
      }
    }
    return m;
  }

  partOverflow(s, p, index) {
    if (s.overflowFailure === null) {
      try {
        checkPart(p, this.curMessage, index);
      } catch (e) {
        if (!(e instanceof PayloadRejected)) throw e;
        s.overflowFailure = e;
      }
    }
    s.overflowBytes += partSize(p);
  }

  part(p, pi) {
    this.curPart = pi;
    if (!this.openObject('history[%m].parts[%p]')) return p;
    let key;
    let first = true;
    while ((key = this.r.nextMember(first)) !== null) {
      first = false;
      const f = matchField(key, PART_FIELDS);
      switch (f) {
        case 5: p.data = this.r.readRawValue(); break; // json.RawMessage: exact bytes; null is "null"
        case 0: p.kind = this.string(p.kind, 'history[%m].parts[%p].kind'); break;
        case 1: p.text = this.string(p.text, 'history[%m].parts[%p].text'); break;
        case 2: p.name = this.string(p.name, 'history[%m].parts[%p].name'); break;
        case 3: p.callId = this.string(p.callId, 'history[%m].parts[%p].call_id'); break;
        case 4: p.namespace = this.string(p.namespace, 'history[%m].parts[%p].namespace'); break;
        default: this.unknown('history[%m].parts[%p]');
      }
    }
    return p;
  }

  plan(p) {
    if (!this.openObject('plan_identity')) return;
    let key;
    let first = true;
    while ((key = this.r.nextMember(first)) !== null) {
      first = false;
      switch (matchField(key, PLAN_FIELDS)) {
        case 0:
          this.slice(p.compiledIdentities, () => '', (cur) => this.string(cur, 'plan_identity.compiled_identities[%i]'),
            'plan_identity.compiled_identities', MAX_COMPILED, null, null);
          break;
        case 1: p.snapshotCompatibilityIdentity = this.string(p.snapshotCompatibilityIdentity, 'plan_identity.snapshot_compatibility_identity'); break;
        case 2: p.toolPlanId = this.string(p.toolPlanId, 'plan_identity.tool_plan_id'); break;
        case 3: p.fingerprint = this.string(p.fingerprint, 'plan_identity.fingerprint'); break;
        case 4:
          p.workspacePresent = true;
          this.inWorkspace = true;
          this.string('', 'plan_identity.workspace_fingerprint');
          this.inWorkspace = false;
          break;
        default: this.unknown('plan_identity');
      }
    }
  }
}

function messageOverflow(s, m, index) {
  if (s.overflowFailure === null) {
    try {
      checkMessage(m, index);
    } catch (e) {
      if (!(e instanceof PayloadRejected)) throw e;
      s.overflowFailure = e;
    }
  }
}

// ---- rules (b.5, b.6) -----------------------------------------------------------------------

const reject = (rule, where) => new PayloadRejected(rule, where);
const loc = (m, p) => `history[${m}].parts[${p}]`;

function checkRules(s) {
  const history = view(s.history);
  const sizes = history.map((m, i) => checkMessage(m, i));
  if (s.history.overflowFailure) throw s.history.overflowFailure;
  if (!isTrimmedNonEmpty(s.definition.name)) throw reject('P-DEF-NAME', 'definition.name');
  if (!isTrimmedNonEmpty(s.definition.model)) throw reject('P-DEF-MODEL', 'definition.model');
  if (s.definition.maxTurns < 1n || s.definition.maxTurns > BigInt(MAX_TURNS)) throw reject('P-DEF-TURNS', 'definition.max_turns');
  checkPlan(s.plan);
  if (s.runIdSubstituted || !isValidRunId(s.runId)) throw reject('P-RUNID', 'run_id');
  if (s.completedTurns > s.definition.maxTurns) throw reject('P-TURNS', 'completed_turns');
  const n = count(s.history);
  if (n === 0 || n > MAX_MESSAGES) throw reject('P-HIST-COUNT', 'history');
  if (s.lastSequence === 0n || s.lastSequence === MAX_U64) throw reject('P-SEQ', 'last_sequence');
  if (!STATUSES.includes(s.status)) throw reject('P-STATUS', 'status');
  if (s.status === 'suspended' && (s.completedTurns < 1n || s.completedTurns > s.definition.maxTurns - 1n)) {
    throw reject('P-SUSPENDED-TURNS', 'completed_turns');
  }
  const ids = view(s.seenInteractionIds);
  if (count(s.seenInteractionIds) > MAX_INTERACTIONS) throw reject('P-IA-COUNT', 'seen_interaction_ids');
  for (let i = 0; i < ids.length; i++) {
    if (!isToken(ids[i], 128)) throw reject('P-IA-TOKEN', `seen_interaction_ids[${i}]`);
    if (i > 0 && compareUtf8(ids[i - 1], ids[i]) >= 0) throw reject('P-IA-ORDER', `seen_interaction_ids[${i}]`);
  }
  checkHistory(history, sizes);
}

function checkMessage(msg, m) {
  if (!isToken(msg.id, 128)) throw reject('P-MSG-ID', `history[${m}].id`);
  let size = utf8Length(msg.id) + utf8Length(msg.role);
  const parts = view(msg.parts);
  for (let p = 0; p < parts.length; p++) size += checkPart(parts[p], m, p);
  if (msg.parts.overflowFailure) throw msg.parts.overflowFailure;
  size += msg.parts.overflowBytes;
  if (!ROLES.includes(msg.role)) throw reject('P-MSG-ROLE', `history[${m}].role`);
  const n = count(msg.parts);
  if (n === 0 || n > MAX_PARTS) throw reject('P-MSG-PARTS', `history[${m}].parts`);
  if (size > MAX_MESSAGE) throw reject('P-MSG-SIZE', `history[${m}]`);
  return size;
}

function checkPart(part, m, p) {
  switch (part.kind) {
    case 'text': {
      if (part.name !== '' || part.callId !== '' || part.namespace !== '' || hasData(part)) throw reject('P-PART-INACTIVE', loc(m, p));
      const textBytes = utf8Length(part.text);
      if (textBytes === 0 || textBytes > MIB) throw reject('P-TEXT', loc(m, p));
      break;
    }
    case 'tool_call':
    case 'tool_result':
      if (part.text !== '' || part.namespace !== '') throw reject('P-PART-INACTIVE', loc(m, p));
      if (!isToken(part.callId, 128)) throw reject('P-CALL-ID', loc(m, p));
      if (!isToken(part.name, 128)) throw reject('P-TOOL-NAME', loc(m, p));
      checkData(part, m, p);
      break;
    case 'extension':
      if (part.text !== '' || part.name !== '' || part.callId !== '') throw reject('P-PART-INACTIVE', loc(m, p));
      if (!isToken(part.namespace, 256)) throw reject('P-NAMESPACE', loc(m, p));
      checkData(part, m, p);
      break;
    default:
      throw reject('P-PART-KIND', loc(m, p));
  }
  return partSize(part);
}

function partSize(part) {
  return utf8Length(part.kind) + utf8Length(part.text) + utf8Length(part.name) + utf8Length(part.callId)
    + utf8Length(part.namespace) + (part.data === null ? 0 : part.data.length);
}

function checkData(part, m, p) {
  if (!hasData(part) || part.data.length > MIB) throw reject('P-DATA', loc(m, p));
}

function checkPlan(plan) {
  const id = plan.toolPlanId;
  if (!isToken(id, 256) || containsGoControl(id) || containsGoSpace(id)) throw reject('P-TOOLPLAN', 'plan_identity.tool_plan_id');
  const compiled = view(plan.compiledIdentities);
  const n = count(plan.compiledIdentities);
  if (n === 0 || n > MAX_COMPILED) throw reject('P-PLAN-COUNT', 'plan_identity.compiled_identities');
  for (let i = 1; i < compiled.length; i++) {
    if (compareUtf8(compiled[i - 1], compiled[i]) > 0) throw reject('P-PLAN-SORTED', 'plan_identity.compiled_identities');
  }
  const seen = new Set();
  for (let i = 0; i < compiled.length; i++) {
    const c = compiled[i];
    const where = `plan_identity.compiled_identities[${i}]`;
    if (!isToken(c, 256)) throw reject('P-PLAN-TOKEN', where);
    if (seen.has(c)) throw reject('P-PLAN-DUP', where);
    seen.add(c);
    const colon = c.indexOf(':');
    if (colon < 0 || colon === c.length - 1) throw reject('P-PLAN-FORM', where);
    if (!CATEGORIES.has(c.substring(0, colon))) throw reject('P-PLAN-CATEGORY', where);
  }
  const compat = plan.snapshotCompatibilityIdentity;
  if (compat !== '' && !isToken(compat, 256)) throw reject('P-COMPAT', 'plan_identity.snapshot_compatibility_identity');
  const fpr = plan.fingerprint;
  if (!fpr.startsWith('sha256:') || !isLowerHex(fpr.substring(7), 64)) throw reject('P-FPR', 'plan_identity.fingerprint');
}

function checkHistory(history, sizes) {
  if (history[0].role !== 'user') throw reject('P-HIST-FIRST-USER', 'history[0].role');
  const messageIds = new Set();
  /** @type {Map<string, {name: string, resolved: boolean}>} */
  const calls = new Map();
  let pending = 0;
  let total = 0;
  for (let m = 0; m < history.length; m++) {
    const msg = history[m];
    if (messageIds.has(msg.id)) throw reject('P-MSG-ID-DUP', `history[${m}].id`);
    messageIds.add(msg.id);
    total += sizes[m];
    if (total > MAX_PAYLOAD_BYTES) throw reject('P-HIST-SIZE', `history[${m}]`);
    const parts = view(msg.parts);
    for (let p = 0; p < parts.length; p++) {
      const part = parts[p];
      if (part.kind === 'tool_call') {
        if (msg.role !== 'assistant') throw reject('P-CALL-ROLE', loc(m, p));
        if (calls.has(part.callId)) throw reject('P-CALL-DUP', loc(m, p));
        calls.set(part.callId, { name: part.name, resolved: false });
        pending++;
      } else if (part.kind === 'tool_result') {
        if (msg.role !== 'tool') throw reject('P-RESULT-ROLE', loc(m, p));
        const call = calls.get(part.callId);
        if (!call || call.resolved || call.name !== part.name) throw reject('P-RESULT-MATCH', loc(m, p));
        call.resolved = true;
        pending--;
      }
    }
  }
  if (pending !== 0) throw reject('P-UNRESOLVED', 'history');
}

// ---- the canonical encoder (b.1, b.2) -------------------------------------------------------

function encodeRaw(s) {
  const w = new GoJsonWriter(4096);
  w.ascii('{"version":').string(s.version)
    .ascii(',"run_id":').string(s.runId)
    .ascii(',"definition":{"name":').string(s.definition.name)
    .ascii(',"model":').string(s.definition.model)
    .ascii(',"max_turns":').unsigned(s.definition.maxTurns)
    .ascii('},"completed_turns":').unsigned(s.completedTurns)
    .ascii(',"history":[');
  const history = view(s.history);
  for (let m = 0; m < history.length; m++) {
    if (m > 0) w.byte(0x2c);
    const msg = history[m];
    w.ascii('{"id":').string(msg.id).ascii(',"role":').string(msg.role).ascii(',"parts":[');
    const parts = view(msg.parts);
    for (let p = 0; p < parts.length; p++) {
      if (p > 0) w.byte(0x2c);
      const part = parts[p];
      w.ascii('{"kind":').string(part.kind);
      if (part.text !== '') w.ascii(',"text":').string(part.text);
      if (part.name !== '') w.ascii(',"name":').string(part.name);
      if (part.callId !== '') w.ascii(',"call_id":').string(part.callId);
      if (part.namespace !== '') w.ascii(',"namespace":').string(part.namespace);
      if (hasData(part)) w.ascii(',"data":').compactRaw(part.data);
      w.byte(0x7d);
    }
    w.ascii(']}');
  }
  w.ascii('],"plan_identity":{"compiled_identities":');
  stringArray(w, view(s.plan.compiledIdentities));
  w.ascii(',"snapshot_compatibility_identity":').string(s.plan.snapshotCompatibilityIdentity)
    .ascii(',"tool_plan_id":').string(s.plan.toolPlanId)
    .ascii(',"fingerprint":').string(s.plan.fingerprint)
    .ascii('},"seen_interaction_ids":');
  stringArray(w, view(s.seenInteractionIds));
  w.ascii(',"last_sequence":').unsigned(s.lastSequence)
    .ascii(',"status":').string(s.status)
    .byte(0x7d);
  return w.toBytes();
}

function stringArray(w, values) {
  w.byte(0x5b);
  values.forEach((v, i) => {
    if (i > 0) w.byte(0x2c);
    w.string(v);
  });
  w.byte(0x5d);
}

// ---- public API -----------------------------------------------------------------------------

/** @param {Uint8Array|Buffer|string} payload */
function asBytes(payload) {
  if (typeof payload === 'string') return utf8Exact(payload);
  if (payload instanceof Uint8Array) return payload;
  throw new TypeError('payload must be a Uint8Array or a string');
}

// The decoding rules in the order of `snapshot validate` (Java Snapshot.decodeRaw) for a reader of
// v1alpha2 only: P-JSON; a type error first in document order (outside the workspace member, before
// any type error inside it); P-VERSION when the version is not v1alpha2 and there is an unknown
// member or type error, or when a workspace member is present (v1alpha2 lacks it); the first
// P-UNKNOWN/P-TYPE; P-TRAILING; P-VERSION.
function decodeRaw(input) {
  const d = new Decoder(input);
  let raw;
  try {
    raw = d.decode();
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw reject('P-JSON', `byte ${e.offset}`);
    throw e;
  }
  // A type error outside the workspace member is one in every format: it keeps its place.
  if (d.savedFirst() && d.saved === 'P-TYPE') throw reject(d.saved, d.savedAt);
  const versionProblem = raw.version !== FORMAT || raw.plan.workspacePresent;
  // The members depend on the version: it is named first.
  if (versionProblem && (d.saved !== null || raw.plan.workspacePresent)) throw reject('P-VERSION', 'version');
  if (d.saved !== null) throw reject(d.saved, d.savedAt);
  d.r.skipWhitespace();
  if (!d.r.atEnd()) throw reject('P-TRAILING', `byte ${d.r.pos}`);
  if (versionProblem) throw reject('P-VERSION', 'version');
  return raw;
}

function toSnapshot(raw, canonical) {
  const history = view(raw.history).map((m) => Object.freeze({
    id: m.id,
    role: m.role,
    parts: Object.freeze(view(m.parts).map((p) => Object.freeze(partOut(p)))),
  }));
  return Object.freeze({
    version: raw.version,
    runId: raw.runId,
    definition: Object.freeze({ name: raw.definition.name, model: raw.definition.model, maxTurns: Number(raw.definition.maxTurns) }),
    completedTurns: Number(raw.completedTurns),
    history: Object.freeze(history),
    planIdentity: Object.freeze({
      compiledIdentities: Object.freeze(view(raw.plan.compiledIdentities)),
      snapshotCompatibilityIdentity: raw.plan.snapshotCompatibilityIdentity,
      toolPlanId: raw.plan.toolPlanId,
      fingerprint: raw.plan.fingerprint,
    }),
    seenInteractionIds: Object.freeze(view(raw.seenInteractionIds)),
    lastSequence: raw.lastSequence,
    status: raw.status,
    canonical,
  });
}

function partOut(p) {
  switch (p.kind) {
    case 'text': return { kind: 'text', text: p.text };
    case 'tool_call': case 'tool_result': return { kind: p.kind, name: p.name, callId: p.callId, data: new RawJson(p.data) };
    default: return { kind: 'extension', namespace: p.namespace, data: new RawJson(p.data) };
  }
}

/**
 * Decodes and validates a payload (b.3-b.6 plus P-CANONICAL) and returns the snapshot.
 * @param {Uint8Array|string} payload
 * @throws {PayloadRejected} with the first broken rule
 */
export function decodeSnapshot(payload) {
  return decodeChecked(asBytes(payload), false);
}

function decodeChecked(bytes, runIdRepaired) {
  if (bytes.length === 0 || bytes.length > MAX_PAYLOAD_BYTES) throw reject('P-SIZE', null);
  const input = Uint8Array.from(bytes); // the caller may reuse its array
  const raw = decodeRaw(input);
  raw.runIdSubstituted ||= runIdRepaired;
  checkRules(raw);
  const canonical = encodeRaw(raw);
  if (!bytesEqual(canonical, input)) throw reject('P-CANONICAL', null);
  return toSnapshot(raw, input);
}

/**
 * The verdict of `spice-authority snapshot validate` for one payload.
 * @param {Uint8Array|string} payload
 * @returns {{ok: true, snapshot: object} | {ok: false, rule: string, where: string|null, reason: string}}
 */
export function validatePayload(payload) {
  try {
    return { ok: true, snapshot: decodeSnapshot(payload) };
  } catch (e) {
    if (e instanceof PayloadRejected) return { ok: false, rule: e.rule, where: e.where, reason: PAYLOAD_RULES[e.rule] };
    throw e;
  }
}

/**
 * The canonical re-encoding of a payload the Go kernel accepts (b.3 decoding, then b.1 encoding):
 * the rules are checked, but the input need not be canonical.
 * @param {Uint8Array|string} payload
 * @returns {Uint8Array}
 * @throws {PayloadRejected} for any rule but P-CANONICAL
 */
export function canonicalize(payload) {
  const bytes = asBytes(payload);
  if (bytes.length === 0 || bytes.length > MAX_PAYLOAD_BYTES) throw reject('P-SIZE', null);
  const raw = decodeRaw(bytes);
  checkRules(raw);
  return encodeRaw(raw);
}

function bytesEqual(a, b) {
  if (a.length !== b.length) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

// ---- raw JSON values (data) -----------------------------------------------------------------

/**
 * One raw JSON value (a part's data), kept as its exact bytes; valid from birth: exactly one
 * JSON value without surrounding white space. Written compacted as Go does.
 */
export class RawJson {
  #bytes;

  /** @param {Uint8Array} bytes trusted: checked by the caller */
  constructor(bytes) {
    this.#bytes = bytes;
  }

  /**
   * From JSON text or bytes, which must be exactly one JSON value.
   * @param {string|Uint8Array} json
   */
  static parse(json) {
    const b = typeof json === 'string' ? utf8Exact(json) : Uint8Array.from(json);
    if (!isOneValue(b)) throw new TypeError('not exactly one JSON value without surrounding white space');
    return new RawJson(b);
  }

  /**
   * From a JS value, written as Go's encoding/json would (strings escaped as Go does; numbers in
   * Go's float64 format, -0 as "-0"; BigInt as integers; objects in insertion order; a non-finite
   * number, undefined, a function or a symbol throws).
   * @param {unknown} value
   */
  static of(value) {
    const w = new GoJsonWriter(64);
    writeValue(w, value, 0);
    return new RawJson(w.toBytes());
  }

  /** A copy of the raw bytes. */
  bytes() {
    return Uint8Array.from(this.#bytes);
  }

  get length() {
    return this.#bytes.length;
  }

  /** @internal the bytes without a copy */
  unsafeBytes() {
    return this.#bytes;
  }

  /** The compacted, HTML-escaped form Go's encoder writes. */
  compact() {
    return new GoJsonWriter(this.#bytes.length).compactRaw(this.#bytes).toBytes();
  }

  /** Size only: data is application content and is never printed. */
  toString() {
    return `RawJson[${this.#bytes.length} bytes]`;
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}

function writeValue(w, v, depth) {
  if (depth > 1000) throw new TypeError('value nests too deeply');
  if (v === null) { w.ascii('null'); return; }
  if (v instanceof RawJson) { w.compactRaw(v.unsafeBytes()); return; }
  switch (typeof v) {
    case 'boolean': w.ascii(v ? 'true' : 'false'); return;
    case 'string': w.string(v); return;
    case 'bigint': w.ascii(v.toString()); return;
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError('JSON has no NaN or infinity (Go refuses them too)');
      // Go: strconv 'f' -1 unless |v| < 1e-6 or >= 1e21, then 'e' with e-07 cleaned to e-7; the
      // shortest round-trip digits, as JS's Number#toString, which switches at the same bounds.
      w.ascii(Object.is(v, -0) ? '-0' : String(v));
      return;
    case 'object':
      if (Array.isArray(v)) {
        w.byte(0x5b);
        v.forEach((e, i) => {
          if (i > 0) w.byte(0x2c);
          writeValue(w, e, depth + 1);
        });
        w.byte(0x5d);
        return;
      }
      {
        w.byte(0x7b);
        let first = true;
        for (const [k, e] of Object.entries(v)) {
          if (e === undefined) continue;
          if (!first) w.byte(0x2c);
          first = false;
          w.string(k);
          w.byte(0x3a);
          writeValue(w, e, depth + 1);
        }
        w.byte(0x7d);
      }
      return;
    default:
      throw new TypeError(`a ${typeof v} is not a JSON value`);
  }
}

// ---- the builder ----------------------------------------------------------------------------

/**
 * Assembles a payload from typed values; build() encodes canonically and runs the full decoder,
 * so a built payload obeys exactly the rules a received one does.
 */
export class SnapshotBuilder {
  #raw = rawSnapshot();

  constructor() {
    this.#raw.version = FORMAT;
  }

  /** @param {string} runId */
  runId(runId) { this.#raw.runId = str(runId, 'runId'); return this; }

  /** @param {{name: string, model: string, maxTurns: number}} d */
  definition(d) {
    this.#raw.definition.name = str(d.name, 'definition.name');
    this.#raw.definition.model = str(d.model, 'definition.model');
    this.#raw.definition.maxTurns = u32(d.maxTurns, 'definition.maxTurns');
    return this;
  }

  /** @param {number} turns */
  completedTurns(turns) { this.#raw.completedTurns = u32(turns, 'completedTurns'); return this; }

  /**
   * @param {{id: string, role: string, parts: Array<object>}} m parts: {kind:'text', text} |
   *   {kind:'tool_call'|'tool_result', name, callId, data} | {kind:'extension', namespace, data};
   *   data a RawJson, or any JS value (RawJson.of)
   */
  addMessage(m) {
    const rm = rawMessage();
    rm.id = str(m.id, 'message id');
    rm.role = str(m.role, 'message role');
    for (const p of m.parts) {
      const rp = rawPart();
      rp.kind = str(p.kind, 'part kind');
      if (p.text !== undefined) rp.text = str(p.text, 'part text');
      if (p.name !== undefined) rp.name = str(p.name, 'part name');
      if (p.callId !== undefined) rp.callId = str(p.callId, 'part callId');
      if (p.namespace !== undefined) rp.namespace = str(p.namespace, 'part namespace');
      if (p.data !== undefined) rp.data = (p.data instanceof RawJson ? p.data : RawJson.of(p.data)).unsafeBytes();
      rm.parts.backing.push(rp);
      rm.parts.len++;
    }
    this.#raw.history.backing.push(rm);
    this.#raw.history.len++;
    return this;
  }

  /** @param {{compiledIdentities: string[], snapshotCompatibilityIdentity: string, toolPlanId: string, fingerprint: string}} p */
  planIdentity(p) {
    const c = this.#raw.plan.compiledIdentities;
    resetToEmpty(c);
    for (const id of p.compiledIdentities) c.backing.push(str(id, 'compiled identity'));
    c.len = c.backing.length;
    this.#raw.plan.snapshotCompatibilityIdentity = str(p.snapshotCompatibilityIdentity, 'snapshotCompatibilityIdentity');
    this.#raw.plan.toolPlanId = str(p.toolPlanId, 'toolPlanId');
    this.#raw.plan.fingerprint = str(p.fingerprint, 'fingerprint');
    return this;
  }

  /** @param {string[]} ids */
  seenInteractionIds(ids) {
    const s = this.#raw.seenInteractionIds;
    resetToEmpty(s);
    for (const id of ids) s.backing.push(str(id, 'interaction id'));
    s.len = s.backing.length;
    return this;
  }

  /** @param {bigint|number|string} seq unsigned 64-bit; a number must be a safe integer */
  lastSequence(seq) {
    let v;
    if (typeof seq === 'bigint') v = seq;
    else if (typeof seq === 'number' && Number.isSafeInteger(seq)) v = BigInt(seq);
    else if (typeof seq === 'string' && /^(0|[1-9][0-9]*)$/.test(seq)) v = BigInt(seq);
    else throw new TypeError('lastSequence must be a BigInt, a safe integer or decimal text');
    if (v < 0n || v > MAX_U64) throw new RangeError('lastSequence must be unsigned 64-bit');
    this.#raw.lastSequence = v;
    return this;
  }

  /** @param {'suspended'|'completed'|'failed'|'cancelled'} status */
  status(status) { this.#raw.status = str(status, 'status'); return this; }

  /**
   * Encodes and validates.
   * @throws {PayloadRejected} with the first broken rule
   */
  build() {
    const bytes = encodeRaw(this.#raw);
    // SECURITY: the encoder writes an unpaired surrogate as U+FFFD; the run ID signed would then
    // differ from the one given. P-RUNID refuses it, in the rules' order.
    return decodeChecked(bytes, !isValidUnicode(this.#raw.runId));
  }
}

function str(v, what) {
  if (typeof v !== 'string') throw new TypeError(`${what} must be a string`);
  return v;
}

function u32(v, what) {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${what} must be an unsigned 32-bit integer`);
  return BigInt(v);
}
