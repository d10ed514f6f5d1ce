// Plan identity (wire-format.md b.4): tool definition fingerprints, the static tool plan ID and
// the combined plan fingerprint. A port of spice.authority.snapshot.plan.PlanIdentities.
//
// Guarantees: every string is hashed as its exact UTF-8 (an unpaired surrogate is refused, never
// replaced); every order is Go's (UTF-8 bytes); a tool definition is valid from birth.

import { createHash, timingSafeEqual } from 'node:crypto';
import { compareUtf8, isToken, isValidJson, utf8Exact } from './gojson.js';

export const PLAN_DOMAIN = 'spice-agent-plan/v2';
export const EFFECTS = Object.freeze(['read_only', 'mutating']);
export const REPLAY_SAFETIES = Object.freeze(['safe', 'idempotent', 'unsafe']);
export const CAPABILITIES = Object.freeze(['filesystem.read', 'filesystem.write', 'process.execute',
  'network.access', 'secrets.read', 'environment.read', 'environment.write']);
const NOT_FOR_READ_ONLY = new Set(['filesystem.write', 'process.execute', 'network.access', 'environment.write']);

/** LP(x) concatenation: u64be(length) then the bytes, for each component. */
class LengthPrefixed {
  constructor() {
    /** @type {Buffer[]} */
    this.parts = [];
  }

  /** @param {Uint8Array|string} x */
  add(x) {
    const b = typeof x === 'string' ? utf8Exact(x) : x;
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(b.length));
    this.parts.push(len, Buffer.from(b.buffer, b.byteOffset, b.length));
    return this;
  }

  sha256Hex() {
    const h = createHash('sha256');
    for (const p of this.parts) h.update(p);
    return h.digest('hex');
  }
}

/**
 * A leased tool definition as the plan identity sees it; checked on construction.
 * @typedef {{name: string, description: string, inputSchema: Uint8Array|string, effect: string,
 *   replaySafety: string, capabilities: readonly string[]}} ToolDefinitionInit
 */
export class ToolDefinition {
  /** @param {ToolDefinitionInit} d */
  constructor(d) {
    if (!isToken(d.name, 128)) throw new TypeError('tool name must be a token of at most 128 bytes');
    if (!isToken(d.description, 4096)) throw new TypeError('tool description must be a token of at most 4096 bytes');
    const schema = typeof d.inputSchema === 'string' ? utf8Exact(d.inputSchema) : Uint8Array.from(d.inputSchema);
    if (schema.length === 0 || schema.length > (1 << 20) || !isValidJson(schema)) {
      throw new TypeError('input schema must be valid JSON of 1..1 MiB');
    }
    if (!EFFECTS.includes(d.effect)) throw new TypeError('effect must be read_only or mutating');
    if (!REPLAY_SAFETIES.includes(d.replaySafety)) throw new TypeError('replay safety must be safe, idempotent or unsafe');
    if (d.effect === 'read_only' && d.replaySafety !== 'safe') throw new TypeError('a read-only tool must be replay-safe');
    if (d.effect === 'mutating' && d.replaySafety === 'safe') throw new TypeError('a mutating tool cannot be replay-safe');
    const seen = new Set();
    for (const c of d.capabilities) {
      if (!CAPABILITIES.includes(c)) throw new TypeError('unknown capability');
      if (seen.has(c)) throw new TypeError('capabilities may not repeat');
      seen.add(c);
      if (d.effect === 'read_only' && NOT_FOR_READ_ONLY.has(c)) throw new TypeError(`a read-only tool may not declare ${c}`);
    }
    this.name = d.name;
    this.description = d.description;
    /** the schema bytes exactly as supplied (not compacted) */
    this.inputSchema = schema;
    this.effect = d.effect;
    this.replaySafety = d.replaySafety;
    this.capabilities = Object.freeze([...d.capabilities]);
    Object.freeze(this);
  }
}

/** @param {ToolDefinition|ToolDefinitionInit} d */
function definition(d) {
  return d instanceof ToolDefinition ? d : new ToolDefinition(d);
}

/**
 * Lowercase hex SHA-256 over LP(name), LP(description), LP(schema), LP(effect), LP(replay
 * safety), LP(capability) for each capability sorted by bytes.
 * @param {ToolDefinition|ToolDefinitionInit} tool
 */
export function toolFingerprint(tool) {
  const d = definition(tool);
  const lp = new LengthPrefixed().add(d.name).add(d.description).add(d.inputSchema).add(d.effect).add(d.replaySafety);
  for (const c of [...d.capabilities].sort(compareUtf8)) lp.add(c);
  return lp.sha256Hex();
}

function sortedByName(tools) {
  const sorted = tools.map(definition).sort((a, b) => compareUtf8(a.name, b.name));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].name === sorted[i - 1].name) throw new TypeError('leased tool names must be unique');
  }
  return sorted;
}

/**
 * `static:` + hex SHA-256 over LP(name) LP(fingerprint) of each tool sorted by name.
 * @param {ReadonlyArray<ToolDefinition|ToolDefinitionInit>} tools
 */
export function staticToolPlanId(tools) {
  const lp = new LengthPrefixed();
  for (const d of sortedByName([...tools])) lp.add(d.name).add(toolFingerprint(d));
  return 'static:' + lp.sha256Hex();
}

/**
 * `sha256:` + hex SHA-256 over LP(domain), LP(each compiled identity in list order), LP(tool plan
 * ID), LP(compatibility identity), then LP(name) LP(fingerprint) per tool sorted by name.
 */
export function planFingerprint(compiledIdentities, toolPlanId, compatibilityIdentity, tools) {
  const lp = new LengthPrefixed().add(PLAN_DOMAIN);
  for (const c of compiledIdentities) lp.add(c);
  lp.add(toolPlanId).add(compatibilityIdentity);
  for (const d of sortedByName([...tools])) lp.add(d.name).add(toolFingerprint(d));
  return 'sha256:' + lp.sha256Hex();
}

/**
 * The full plan identity of a host's compiled identities (sorted here), plan ID, compatibility
 * identity and leased tools.
 */
export function planIdentity(compiledIdentities, toolPlanId, compatibilityIdentity, tools) {
  const sorted = [...compiledIdentities].sort(compareUtf8);
  return Object.freeze({
    compiledIdentities: Object.freeze(sorted),
    snapshotCompatibilityIdentity: compatibilityIdentity,
    toolPlanId,
    fingerprint: planFingerprint(sorted, toolPlanId, compatibilityIdentity, tools),
  });
}

/**
 * Recomputes `recorded`'s fingerprint from the tools leased now and compares in constant time
 * (wire-format.md f.4).
 */
export function planMatches(recorded, leasedTools) {
  const again = Buffer.from(planFingerprint(recorded.compiledIdentities, recorded.toolPlanId,
    recorded.snapshotCompatibilityIdentity, leasedTools), 'utf8');
  const had = Buffer.from(recorded.fingerprint, 'utf8');
  return again.length === had.length && timingSafeEqual(again, had);
}
