// The SnapshotEnvelope protobuf (wire-format.md a): a strict, minimal proto3 reader of the
// fields a host needs (the payload, the run, the sequence, the lifecycle), the structural rules
// of a.3, and the canonical MAC input of c.1 (for inspection and tests; a host never holds a key).
//
// Guarantees: a host never trusts an envelope by this parse: only the helper verifies the claim.
// Parsing is bounded (1..16 MiB + 1 KiB), iterative and refuses malformed varints, truncated
// fields and wrong wire types; unknown fields are skipped, as proto3 keeps them.

import { createHash, timingSafeEqual } from 'node:crypto';
import { isToken } from './gojson.js';

export const ENVELOPE_FORMAT = 'spice.agent.snapshot/v1alpha2';
export const MAX_ENVELOPE_BYTES = 16 * 1024 * 1024 + 1024;
export const MAC_DOMAIN = 'spice.agent.run-authority/v1';
export const LIFECYCLES = Object.freeze({ 1: 'suspended', 2: 'completed', 3: 'failed', 4: 'cancelled' });

/** The envelope is not a structurally valid SnapshotEnvelope; `rule` is an E-… id. */
export class EnvelopeRejected extends Error {
  constructor(rule, what) {
    super(`${rule}: ${what}`);
    this.name = 'EnvelopeRejected';
    this.rule = rule;
  }
}

class Proto {
  constructor(b, from, to) {
    this.b = b;
    this.pos = from;
    this.end = to;
  }

  varint() {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new EnvelopeRejected('E-PROTO', 'truncated varint');
      const x = this.b[this.pos++];
      v |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) {
        if (v > 0xffffffffffffffffn) throw new EnvelopeRejected('E-PROTO', 'varint overflows 64 bits');
        return v;
      }
    }
    throw new EnvelopeRejected('E-PROTO', 'varint too long');
  }

  bytes() {
    const n = this.varint();
    if (n > BigInt(this.end - this.pos)) throw new EnvelopeRejected('E-PROTO', 'truncated field');
    const out = this.b.subarray(this.pos, this.pos + Number(n));
    this.pos += Number(n);
    return out;
  }

  skip(wire) {
    switch (wire) {
      case 0: this.varint(); return;
      case 1: this.need(8); return;
      case 2: this.bytes(); return;
      case 5: this.need(4); return;
      default: throw new EnvelopeRejected('E-PROTO', 'unsupported wire type');
    }
  }

  need(n) {
    if (this.end - this.pos < n) throw new EnvelopeRejected('E-PROTO', 'truncated field');
    this.pos += n;
  }

  /** Iterates (field number, wire type) pairs. */
  *fields() {
    while (this.pos < this.end) {
      const key = this.varint();
      const field = Number(key >> 3n);
      const wire = Number(key & 7n);
      if (field === 0) throw new EnvelopeRejected('E-PROTO', 'field number 0');
      yield [field, wire];
    }
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function utf8(b, what) {
  try {
    return decoder.decode(b);
  } catch {
    throw new EnvelopeRejected('E-PROTO', `${what} is not valid UTF-8`);
  }
}

function expectWire(wire, want) {
  if (wire !== want) throw new EnvelopeRejected('E-PROTO', 'wrong wire type');
}

/**
 * Parses a binary SnapshotEnvelope and checks its structure (a.3: E-FORMAT, E-RUNID, E-SEQ,
 * E-LIFECYCLE, E-PAYLOAD-SIZE, E-DIGEST, E-AUTH-SHAPE; the payload itself is not validated here).
 * @param {Uint8Array} bytes
 */
export function parseEnvelope(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('envelope must be a Uint8Array');
  if (bytes.length === 0 || bytes.length > MAX_ENVELOPE_BYTES) throw new EnvelopeRejected('E-SIZE', 'envelope length out of bounds');
  const e = { format: '', runId: '', lastSequence: 0n, lifecycle: 0, payload: new Uint8Array(0), sha256: new Uint8Array(0), authority: null };
  const p = new Proto(bytes, 0, bytes.length);
  for (const [field, wire] of p.fields()) {
    switch (field) {
      case 1: expectWire(wire, 2); e.format = utf8(p.bytes(), 'format'); break;
      case 2: expectWire(wire, 2); e.runId = utf8(p.bytes(), 'run_id'); break;
      case 3: expectWire(wire, 0); e.lastSequence = p.varint(); break;
      case 4: {
        expectWire(wire, 0);
        const v = p.varint();
        e.lifecycle = v > 0xffffffffn ? -1 : Number(v);
        break;
      }
      case 5: expectWire(wire, 2); e.payload = p.bytes(); break;
      case 6: expectWire(wire, 2); e.sha256 = p.bytes(); break;
      case 7: {
        expectWire(wire, 2);
        const sub = p.bytes();
        const a = e.authority ?? { scopeId: new Uint8Array(0), generation: 0n, hmacSha256: new Uint8Array(0) };
        const q = new Proto(sub, 0, sub.length);
        for (const [f, w] of q.fields()) {
          if (f === 1) { expectWire(w, 2); a.scopeId = q.bytes(); }
          else if (f === 2) { expectWire(w, 0); a.generation = q.varint(); }
          else if (f === 3) { expectWire(w, 2); a.hmacSha256 = q.bytes(); }
          else q.skip(w);
        }
        e.authority = a;
        break;
      }
      default: p.skip(wire);
    }
  }
  if (e.format !== ENVELOPE_FORMAT) throw new EnvelopeRejected('E-FORMAT', 'format must be ' + ENVELOPE_FORMAT);
  if (!isToken(e.runId, 128)) throw new EnvelopeRejected('E-RUNID', 'run_id must be a token of at most 128 bytes');
  if (e.lastSequence === 0n || e.lastSequence === 0xffffffffffffffffn) throw new EnvelopeRejected('E-SEQ', 'last_sequence must be 1..2^64-2');
  if (!(e.lifecycle >= 1 && e.lifecycle <= 4)) throw new EnvelopeRejected('E-LIFECYCLE', 'lifecycle must be 1..4');
  if (e.payload.length === 0 || e.payload.length > 16 * 1024 * 1024) throw new EnvelopeRejected('E-PAYLOAD-SIZE', 'payload must be 1..16 MiB');
  const digest = createHash('sha256').update(e.payload).digest();
  if (e.sha256.length !== 32 || !timingSafeEqual(digest, Buffer.from(e.sha256))) throw new EnvelopeRejected('E-DIGEST', 'sha256 does not match the payload');
  const a = e.authority;
  if (!a || a.scopeId.length !== 32 || a.generation < 1n || a.hmacSha256.length !== 32) {
    throw new EnvelopeRejected('E-AUTH-SHAPE', 'authority must carry a 32-byte scope, a generation >= 1 and a 32-byte MAC');
  }
  return Object.freeze({
    format: e.format,
    runId: e.runId,
    lastSequence: e.lastSequence,
    lifecycle: e.lifecycle,
    status: LIFECYCLES[e.lifecycle],
    payload: Uint8Array.from(e.payload),
    sha256: Uint8Array.from(e.sha256),
    authority: Object.freeze({ scopeId: Uint8Array.from(a.scopeId), generation: a.generation, hmacSha256: Uint8Array.from(a.hmacSha256) }),
  });
}

/**
 * LP(x) concatenation (wire-format.md 0): u64be(length) then the bytes, per component.
 * @param {Array<Uint8Array|string>} components strings are UTF-8
 */
export function lengthPrefixed(components) {
  const out = [];
  for (const c of components) {
    const b = typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c.buffer, c.byteOffset, c.length);
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(b.length));
    out.push(len, b);
  }
  return new Uint8Array(Buffer.concat(out));
}

/** u64be(v). @param {bigint} v */
export function u64be(v) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(v));
  return new Uint8Array(b);
}

/**
 * The canonical MAC input of c.1 for a parsed envelope's fields (what the helper's claim covers).
 * @param {{scopeId: Uint8Array, generation: bigint, format: string, runId: string, lastSequence: bigint, lifecycle: number, sha256: Uint8Array}} f
 */
export function macInput(f) {
  const lifecycle = Buffer.alloc(4);
  lifecycle.writeUInt32BE(f.lifecycle);
  return lengthPrefixed([MAC_DOMAIN, f.scopeId, u64be(f.generation), f.format, f.runId, u64be(f.lastSequence),
    new Uint8Array(lifecycle), f.sha256]);
}
