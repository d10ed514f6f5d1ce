// Every vector file of spec-kit/vectors/, as data: one loop per file collecting failures by case.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { kitJson } from '../testing/kit.js';
import {
  parseEnvelope, macInput, lengthPrefixed, validatePayload, toolFingerprint, staticToolPlanId, planFingerprint,
  planIdentity, planMatches, endpointProofMac, verifyEndpointProof, ToolDefinition,
} from '../index.js';

const hex = (b) => Buffer.from(b).toString('hex');
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(v)); return b; };

test('plan-identity.json: every tool fingerprint, static plan ID and plan fingerprint', () => {
  const v = kitJson('vectors/plan-identity.json');
  const tools = Object.fromEntries(v.tools.map((t) => [t.key, new ToolDefinition({
    name: t.name, description: t.description, inputSchema: t.input_schema_utf8, effect: t.effect,
    replaySafety: t.replay_safety, capabilities: t.capabilities,
  })]));
  const failures = [];
  for (const t of v.tools) if (toolFingerprint(tools[t.key]) !== t.fingerprint) failures.push(`tool ${t.key}`);
  for (const s of v.static_plan_ids) {
    if (staticToolPlanId(s.tools.map((k) => tools[k])) !== s.static_plan_id) failures.push(`static ${s.tools}`);
  }
  for (const p of v.plans) {
    const leased = p.tools.map((k) => tools[k]);
    if (planFingerprint(p.compiled_identities, p.tool_plan_id, p.snapshot_compatibility_identity, leased) !== p.fingerprint) failures.push(`plan ${p.first_used_by}`);
    const id = planIdentity([...p.compiled_identities].reverse(), p.tool_plan_id, p.snapshot_compatibility_identity, leased);
    if (id.fingerprint !== p.fingerprint) failures.push(`planIdentity ${p.first_used_by}`);
    const recorded = { compiledIdentities: p.compiled_identities, snapshotCompatibilityIdentity: p.snapshot_compatibility_identity, toolPlanId: p.tool_plan_id, fingerprint: p.fingerprint };
    if (!planMatches(recorded, leased)) failures.push(`matches ${p.first_used_by}`);
    if (leased.length > 0 && planMatches(recorded, leased.slice(1))) failures.push(`matches without a tool ${p.first_used_by}`);
  }
  assert.deepEqual(failures, []);
  assert.equal(v.plans.length + v.tools.length + v.static_plan_ids.length, 14);
});

test('envelope.json: every envelope parses to its fields, its payload is valid and canonical, its MAC input and claim match', () => {
  const v = kitJson('vectors/envelope.json');
  const failures = [];
  for (const c of v.cases) {
    const e = parseEnvelope(Buffer.from(c.envelope_hex, 'hex'));
    if (e.runId !== c.fields.run_id || e.lastSequence !== BigInt(c.fields.last_sequence_decimal) || e.lifecycle !== c.fields.lifecycle_number) failures.push(`${c.name}: fields`);
    if (hex(e.payload) !== c.payload_hex || hex(e.sha256) !== c.fields.sha256_hex) failures.push(`${c.name}: payload`);
    if (!validatePayload(e.payload).ok) failures.push(`${c.name}: payload not valid`);
    const input = macInput({ ...e, ...e.authority });
    if (hex(input) !== c.canonical_mac_input_hex) failures.push(`${c.name}: MAC input`);
    if (createHmac('sha256', Buffer.from(c.authority.run_subkey_hex, 'hex')).update(input).digest('hex') !== c.hmac_sha256_hex) failures.push(`${c.name}: claim`);
    if (hex(e.authority.hmacSha256) !== c.hmac_sha256_hex) failures.push(`${c.name}: claim field`);
  }
  assert.deepEqual(failures, []);
  assert.equal(v.cases.length, 2);
});

test('envelope: a flipped payload byte is E-DIGEST, a truncation is refused', () => {
  const c = kitJson('vectors/envelope.json').cases[0];
  const b = Buffer.from(c.envelope_hex, 'hex');
  const flipped = Buffer.from(b);
  flipped[60] ^= 1;
  assert.throws(() => parseEnvelope(flipped), { rule: 'E-DIGEST' });
  assert.throws(() => parseEnvelope(b.subarray(0, b.length - 3)), { name: 'EnvelopeRejected' });
  assert.throws(() => parseEnvelope(new Uint8Array(0)), { name: 'EnvelopeRejected' });
});

test('mac-input.json: every case, component by component', () => {
  const v = kitJson('vectors/mac-input.json');
  const failures = [];
  for (const c of v.cases) {
    const i = c.inputs;
    const input = macInput({
      scopeId: Buffer.from(i.scope_id_hex, 'hex'), generation: BigInt(i.generation_decimal), format: i.format,
      runId: Buffer.from(i.run_id_utf8_hex, 'hex').toString('utf8'), lastSequence: BigInt(i.last_sequence_decimal),
      lifecycle: i.lifecycle_number, sha256: Buffer.from(i.payload_sha256_hex, 'hex'),
    });
    if (hex(input) !== c.canonical_input_hex) failures.push(`${c.name}: input`);
    if (input.length !== c.canonical_input_length) failures.push(`${c.name}: length`);
    if (createHmac('sha256', Buffer.from(i.key_hex, 'hex')).update(input).digest('hex') !== c.hmac_sha256_hex) failures.push(`${c.name}: hmac`);
  }
  assert.deepEqual(failures, []);
  assert.equal(v.cases.length, 4);
});

test('run-subkey.json: every subkey', () => {
  const v = kitJson('vectors/run-subkey.json');
  const failures = [];
  for (const c of v.cases) {
    const i = c.inputs;
    const input = lengthPrefixed([v.domain, Buffer.from(i.scope_id_hex, 'hex'), Buffer.from(i.run_id_utf8_hex, 'hex'), u64(i.run_generation_decimal)]);
    if (hex(input) !== c.hmac_input_hex) failures.push(`${c.name}: input`);
    if (createHmac('sha256', Buffer.from(i.master_key_hex, 'hex')).update(input).digest('hex') !== c.subkey_hex) failures.push(`${c.name}: subkey`);
  }
  assert.deepEqual(failures, []);
  assert.equal(v.cases.length, 3);
});

test('record.json: every record MAC and signed line', () => {
  const v = kitJson('vectors/record.json');
  const key = Buffer.from(v.store.master_key_hex, 'hex');
  const failures = [];
  for (const c of v.cases) {
    const input = lengthPrefixed([v.domain, Buffer.from(c.record_json_hex, 'hex')]);
    if (hex(input) !== c.mac_input_hex) failures.push(`${c.name}: input`);
    const mac = createHmac('sha256', key).update(input).digest('hex');
    if (mac !== c.record_hmac_sha256_hex) failures.push(`${c.name}: mac`);
    if (!c.signed_line_utf8.includes(mac) || !c.signed_line_utf8.endsWith('\n')) failures.push(`${c.name}: line`);
  }
  assert.deepEqual(failures, []);
  assert.equal(v.cases.length, 3);
});

// The same fixed vectors as EndpointProofTest.java (client) and EndpointProofMacTest.java.
const TOKEN = Buffer.from('feedface'.repeat(8), 'ascii');
const NONCE = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const VECTOR = '71e7d4c20286b9e8dc4f471fd77b02042b4e68bd29fa5df2fff92913d7fb68b9';
const TOKEN2 = Buffer.from('0123456789abcdef'.repeat(4), 'ascii');
const NONCE2 = Buffer.alloc(32, 0xff);
const VECTOR2 = '7c526d496ca17a29daa69509669dfa731ec74ca2657f5997f3316c20af796b6b';
const OTHER_PORT = '4f5bb64f585e117bb2dd5d721bb4589c19782bb2abad1c8063fed872afd98e46';

test('endpointProofMac: the fixed vectors of EndpointProofTest, and an IPv4-mapped address is the IPv4 one', () => {
  assert.equal(hex(endpointProofMac(TOKEN, NONCE, '127.0.0.1', 8421)), VECTOR);
  assert.equal(hex(endpointProofMac(TOKEN2, NONCE2, '::1', 65535)), VECTOR2);
  assert.equal(hex(endpointProofMac(TOKEN, NONCE, '127.0.0.1', 8422)), OTHER_PORT);
  assert.equal(hex(endpointProofMac(TOKEN, NONCE, '::ffff:127.0.0.1', 8421)), VECTOR);
  assert.equal(TOKEN.toString('ascii'), 'feedface'.repeat(8)); // the token is left as it was
  assert.throws(() => endpointProofMac(Buffer.alloc(0), NONCE, '127.0.0.1', 1));
  assert.throws(() => endpointProofMac(TOKEN, Buffer.alloc(31), '127.0.0.1', 1));
  assert.throws(() => endpointProofMac(TOKEN, NONCE, '127.0.0.1', 65536));
});

test('verifyEndpointProof: the expected proof passes; every other answer is refused without showing token or proof', () => {
  const body = (s) => Buffer.from(s);
  verifyEndpointProof(TOKEN, NONCE, '127.0.0.1', 8421, body(`{"proof":"${VECTOR}"}`));
  verifyEndpointProof(TOKEN, NONCE, '127.0.0.1', 8421, body(`{"proof": "${VECTOR}", "other": 1}`));
  const otherAddress = hex(endpointProofMac(TOKEN, NONCE, '127.0.0.2', 8421));
  const cases = [
    ['wrong nonce', `{"proof":"${hex(endpointProofMac(TOKEN, NONCE2, '127.0.0.1', 8421))}"}`, 'its proof is wrong'],
    ['wrong token', `{"proof":"${hex(endpointProofMac(TOKEN2, NONCE, '127.0.0.1', 8421))}"}`, 'its proof is wrong'],
    ['another port (relayed)', `{"proof":"${OTHER_PORT}"}`, 'its proof is wrong'],
    ['another address (relayed)', `{"proof":"${otherAddress}"}`, 'its proof is wrong'],
    ['unbound v1 proof', '{"proof":"deaaf55ce666ec699a7b6a39edc618360b2ddabfd4617d5dbb7174fc01aa87d5"}', 'its proof is wrong'],
    ['upper case', `{"proof":"${VECTOR.toUpperCase()}"}`, 'not 64 lowercase hex'],
    ['short', `{"proof":"${VECTOR.slice(2)}"}`, 'not 64 lowercase hex'],
    ['long', `{"proof":"${VECTOR}00"}`, 'not 64 lowercase hex'],
    ['the token itself', `{"proof":"${TOKEN.toString()}"}`, 'its proof is wrong'],
    ['number', '{"proof":1}', 'no proof'],
    ['missing', '{"ok":true}', 'no proof'],
    ['array', `["${VECTOR}"]`, 'not a JSON object'],
    ['not JSON', `proof=${VECTOR}`, 'not a JSON object'],
    ['empty', '', 'not a JSON object'],
  ];
  for (const [what, b, msg] of cases) {
    assert.throws(() => verifyEndpointProof(TOKEN, NONCE, '127.0.0.1', 8421, body(b)), (e) => {
      assert.ok(e.message.includes(msg), `${what}: ${e.message}`);
      assert.ok(!e.message.includes(TOKEN.toString()) && !e.message.includes(VECTOR.slice(0, 16)), what);
      return true;
    }, what);
  }
});
