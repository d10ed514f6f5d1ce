// Deterministic payload mutations for the differential test against the Java validator:
// structural changes (through a JS object written back with Go's encoding) and byte-level ones.
import { RawJson } from '../index.js';

/** A small seeded PRNG (mulberry32). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ['', ' ', 'x', ' x', 'x ', '\u0085x', 'x\u00a0', '\u2028', 'a\u0001b', 'a b', 'user', 'assistant', 'tool', 'system',
  'text', 'tool_call', 'tool_result', 'extension', 'suspended', 'completed', 'failed', 'cancelled', 'running', 'Suspended',
  'spice.agent.snapshot/v1alpha2', 'spice.agent.snapshot/v1alpha1', 'stage:kernel', 'tool:', 'nope:x', ':x', 'sha256:' + 'a'.repeat(64),
  'sha256:' + 'A'.repeat(64), 'static:abc', 'r'.repeat(96), 'r'.repeat(97), 'i'.repeat(128), 'i'.repeat(129), 'é'.repeat(49),
  '😀', '\uff5e', 'call-1', 'read', '<&>', 'generation-1', 'gen 1', 'm-0001'];
const NUMBERS = [0, 1, 2, 3, 7, 999, 1000, 1001, 4294967295n, 4294967296n, 18446744073709551614n, 18446744073709551615n,
  18446744073709551616n, -1, 1.5, 0.1];
const KEYS = ['version', 'run_id', 'definition', 'completed_turns', 'history', 'plan_identity', 'seen_interaction_ids',
  'last_sequence', 'status', 'name', 'model', 'max_turns', 'id', 'role', 'parts', 'kind', 'text', 'call_id', 'namespace',
  'data', 'compiled_identities', 'snapshot_compatibility_identity', 'tool_plan_id', 'fingerprint', 'extra', 'RUN_ID', 'ſtatus'];

function pick(r, xs) {
  return xs[Math.floor(r() * xs.length)];
}

function randomValue(r) {
  switch (Math.floor(r() * 7)) {
    case 0: return pick(r, STRINGS);
    case 1: return pick(r, NUMBERS);
    case 2: return null;
    case 3: return [];
    case 4: return {};
    case 5: return [pick(r, STRINGS)];
    default: return r() < 0.5;
  }
}

/** All (container, key) slots of an object tree. */
function slots(v, out = []) {
  if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      out.push([v, k]);
      slots(v[k], out);
    }
  }
  return out;
}

function mutateTree(r, root) {
  const all = slots(root);
  if (all.length === 0) return;
  const [c, k] = pick(r, all);
  switch (Math.floor(r() * 9)) {
    case 0: c[k] = randomValue(r); break;
    case 1: if (Array.isArray(c)) c.splice(Number(k), 1); else delete c[k]; break;
    case 2: if (!Array.isArray(c)) { c[pick(r, KEYS)] = randomValue(r); } break;
    case 3: if (Array.isArray(c)) c.push(structuredClone(c[k])); break;
    case 4: if (Array.isArray(c) && c.length > 1) { const j = Math.floor(r() * c.length); [c[k], c[j]] = [c[j], c[k]]; } break;
    case 5: c[k] = typeof c[k] === 'string' ? pick(r, STRINGS) : pick(r, NUMBERS); break;
    case 6: if (Array.isArray(c)) c.length = 0; break;
    case 7: if (!Array.isArray(c)) { const v = c[k]; delete c[k]; c[pick(r, KEYS)] = v; } break;
    default: if (!Array.isArray(c) && typeof c[k] === 'string') c[k] = c[k] + pick(r, STRINGS); break;
  }
}

const BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x30, 0x31, 0x61, 0x6e, 0x75, 0xff, 0xc3, 0xe2, 0x2f, 0x3c];

function mutateBytes(r, b) {
  const out = Buffer.from(b);
  const i = Math.floor(r() * out.length);
  switch (Math.floor(r() * 4)) {
    case 0: out[i] = pick(r, BYTES); return out;
    case 1: return Buffer.concat([out.subarray(0, i), out.subarray(i + 1)]);
    case 2: return Buffer.concat([out.subarray(0, i), Buffer.from([pick(r, BYTES)]), out.subarray(i)]);
    default: return Buffer.concat([out.subarray(0, i), out.subarray(Math.min(out.length, i + 1 + Math.floor(r() * 40)))]);
  }
}

/** `n` mutants of the seed payloads (Buffers), deterministic for `seed`. */
export function mutants(seeds, n, seed = 1) {
  const r = prng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const base = pick(r, seeds);
    let bytes;
    try {
      const tree = JSON.parse(base.toString('utf8'));
      const times = 1 + Math.floor(r() * 3);
      for (let k = 0; k < times; k++) mutateTree(r, tree);
      bytes = Buffer.from(RawJson.of(tree).bytes());
    } catch {
      bytes = Buffer.from(base);
    }
    if (r() < 0.25) bytes = mutateBytes(r, bytes);
    out.push(bytes);
  }
  return out;
}
