// The payload corpus, the transcripts and the encoder rules of wire-format.md b.1-b.2.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { KIT, kitBytes, kitJson, tempDir } from '../testing/kit.js';
import { GoJsonWriter } from '../src/gojson.js';
import {
  validatePayload, canonicalize, decodeSnapshot, SnapshotBuilder, RawJson, PayloadRejected, planIdentity, ToolDefinition,
} from '../index.js';

const sha = (b) => createHash('sha256').update(b).digest('hex');

test('payload corpus: every file has its expected verdict and rule, and its indexed digest', () => {
  const index = kitJson('payload-corpus/public/index.json');
  const failures = [];
  for (const c of index.cases) {
    const bytes = kitBytes(`payload-corpus/public/${c.file}`);
    if (c.sha256 !== undefined && sha(bytes) !== c.sha256) failures.push(`${c.file}: digest`);
    const v = validatePayload(bytes);
    const got = v.ok ? 'valid' : `rejected ${v.rule}`;
    const want = c.expected === 'valid' ? 'valid' : `rejected ${c.rule}`;
    if (got !== want) failures.push(`${c.file}: got ${got}, want ${want}`);
    if (v.ok && !Buffer.from(canonicalize(bytes)).equals(bytes)) failures.push(`${c.file}: re-encoding differs`);
  }
  assert.deepEqual(failures, []);
  assert.equal(index.cases.length, 51);
  // every file of the directory is indexed
  const files = fs.readdirSync(path.join(KIT, 'payload-corpus/public')).filter((f) => f !== 'index.json');
  assert.deepEqual(files.sort(), index.cases.map((c) => c.file).sort());
});

test('transcripts: every file is valid, byte-identical after re-encoding, with its indexed plan and digest', () => {
  const index = kitJson('transcripts/index.json');
  const failures = [];
  for (const c of index.cases) {
    const bytes = kitBytes(`transcripts/${c.file}`);
    if (sha(bytes) !== c.sha256) failures.push(`${c.file}: digest`);
    const v = validatePayload(bytes);
    if (!v.ok) { failures.push(`${c.file}: ${v.rule} at ${v.where}`); continue; }
    const s = v.snapshot;
    if (!Buffer.from(canonicalize(bytes)).equals(bytes)) failures.push(`${c.file}: re-encoding differs`);
    if (s.runId !== c.run_id || s.lastSequence !== BigInt(c.last_sequence) || s.status !== c.status
      || s.planIdentity.toolPlanId !== c.tool_plan_id || s.planIdentity.fingerprint !== c.plan_fingerprint
      || s.history.length !== c.messages) failures.push(`${c.file}: fields`);
    // rebuilt from its decoded values by the builder: the same bytes
    const b = new SnapshotBuilder().runId(s.runId).definition(s.definition).completedTurns(s.completedTurns)
      .planIdentity(s.planIdentity).seenInteractionIds([...s.seenInteractionIds]).lastSequence(s.lastSequence).status(s.status);
    for (const m of s.history) b.addMessage(m);
    if (!Buffer.from(b.build().canonical).equals(bytes)) failures.push(`${c.file}: builder differs`);
  }
  assert.deepEqual(failures, []);
  assert.equal(index.cases.length, 100);
});

test('canonicalize: a pretty-printed or re-cased valid payload is P-CANONICAL, and canonicalize() restores the bytes', () => {
  const bytes = kitBytes('payload-corpus/public/valid-01-minimal-suspended.json');
  const pretty = Buffer.from(JSON.stringify(JSON.parse(bytes.toString()), null, 2));
  assert.equal(validatePayload(pretty).rule, 'P-CANONICAL');
  assert.ok(Buffer.from(canonicalize(pretty)).equals(bytes));
  const recased = Buffer.from(bytes.toString().replace('"run_id"', '"RUN_ID"'));
  assert.equal(validatePayload(recased).rule, 'P-CANONICAL');
  const longS = Buffer.from(bytes.toString().replace('"status"', '"\u017ftatus"'));
  assert.equal(validatePayload(longS).rule, 'P-CANONICAL');
  assert.equal(validatePayload(Buffer.concat([bytes, Buffer.from('\n')])).rule, 'P-CANONICAL');
  assert.equal(validatePayload(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])).rule, 'P-JSON');
  assert.equal(validatePayload(new Uint8Array(0)).rule, 'P-SIZE');
});

function minimal() {
  const tool = new ToolDefinition({ name: 'read', description: 'Read a fixture.', inputSchema: '{}', effect: 'read_only', replaySafety: 'safe', capabilities: ['filesystem.read'] });
  return new SnapshotBuilder().runId('run-1').definition({ name: 'test', model: 'model', maxTurns: 3 }).completedTurns(1)
    .planIdentity(planIdentity(['stage:kernel', 'broker:injected', 'provider:injected'], 'generation-1', 'tests:v1', [tool]))
    .seenInteractionIds([]).lastSequence(7n).status('suspended');
}

test('builder: reproduces corpus valid-01 byte for byte', () => {
  const want = kitBytes('payload-corpus/public/valid-01-minimal-suspended.json');
  const text = decodeSnapshot(want).history[0].parts[0].text;
  const s = minimal().addMessage({ id: 'input-1', role: 'user', parts: [{ kind: 'text', text }] }).build();
  assert.ok(Buffer.from(s.canonical).equals(want));
});

test('encoder: Go escaping of strings (HTML, U+2028/9, \\b \\f, controls, DEL, /, unpaired surrogates)', () => {
  const text = '<a>&"\\/\b\f\n\r\t\u0001\u001f\u007f\u2028\u2029é😀';
  const s = minimal().addMessage({ id: 'input-1', role: 'user', parts: [{ kind: 'text', text }] }).build();
  const out = Buffer.from(s.canonical).toString('utf8');
  const want = '"\\u003ca\\u003e\\u0026\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\\u2028\\u2029é😀"';
  assert.ok(out.includes(`"text":${want}`), out);
  // An unpaired surrogate is written as \ufffd (Go's invalid UTF-8), which decodes to U+FFFD and
  // re-encodes raw: not a fixed point, so a builder refuses it (P-CANONICAL), as the Java one does.
  assert.equal(Buffer.from(new GoJsonWriter().string('\ud800x\udc00').toBytes()).toString(), '"\\ufffdx\\ufffd"');
  assert.throws(() => minimal().addMessage({ id: 'input-1', role: 'user', parts: [{ kind: 'text', text: 'a\ud800' }] }).build(), { rule: 'P-CANONICAL' });
});

test('encoder: data is compacted with HTML escaping; numbers, escapes, key order and duplicates kept', () => {
  const raw = RawJson.parse('{ "b" : [1, 2.50, -0.0, 1e3] , "a":"<\\/x>\\u0041", "a" : "\u2028" }');
  const s = minimal().addMessage({ id: 'input-1', role: 'user', parts: [{ kind: 'extension', namespace: 'ns', data: raw }] }).build();
  const out = Buffer.from(s.canonical).toString('utf8');
  assert.ok(out.includes('"data":{"b":[1,2.50,-0.0,1e3],"a":"\\u003c\\/x\\u003e\\u0041","a":"\\u2028"}'), out);
});

test('RawJson.of: Go float64 formatting, -0, BigInt, and refusal of NaN', () => {
  const f = (v) => Buffer.from(RawJson.of(v).bytes()).toString();
  assert.equal(f([0.1, 1e21, 1e20, 1e-7, 0.000001, 123456789012345680000, -0, 2.5e-10, 1.5]), '[0.1,1e+21,100000000000000000000,1e-7,0.000001,123456789012345680000,-0,2.5e-10,1.5]');
  assert.equal(f({ n: 18446744073709551614n, s: '<&>' }), '{"n":18446744073709551614,"s":"\\u003c\\u0026\\u003e"}');
  assert.throws(() => RawJson.of(NaN), TypeError);
  assert.throws(() => RawJson.of(Infinity), TypeError);
  assert.throws(() => RawJson.parse(' 1'), TypeError);
  assert.equal(String(RawJson.of({ secret: 'x' })), 'RawJson[14 bytes]');
});

test('builder: sequences are unsigned 64-bit; 2^64-2 is valid, 2^64-1 is P-SEQ, never lossy', () => {
  const msg = { id: 'input-1', role: 'user', parts: [{ kind: 'text', text: 'x' }] };
  const s = minimal().lastSequence(18446744073709551614n).addMessage(msg).build();
  assert.equal(s.lastSequence, 18446744073709551614n);
  assert.ok(Buffer.from(s.canonical).toString().includes('"last_sequence":18446744073709551614,'));
  assert.throws(() => minimal().lastSequence(18446744073709551615n).addMessage(msg).build(), (e) => e instanceof PayloadRejected && e.rule === 'P-SEQ');
  assert.throws(() => minimal().lastSequence(2 ** 60), TypeError);
  assert.throws(() => minimal().runId('run-\ud800').addMessage(msg).build(), (e) => e.rule === 'P-RUNID');
});

test('decoder: the first broken rule in Go check order; a syntax error anywhere outranks an unknown member', () => {
  const base = kitBytes('payload-corpus/public/valid-01-minimal-suspended.json').toString();
  const rule = (s) => validatePayload(Buffer.from(s)).rule;
  assert.equal(rule(base.replace('"status":"suspended"', '"status":"suspended","x":1')), 'P-UNKNOWN');
  assert.equal(rule(base.replace('"status":"suspended"', '"status":"suspended","x":1').replace(/}$/, '')), 'P-JSON');
  assert.equal(rule(base.replace('"last_sequence":7', '"last_sequence":18446744073709551616')), 'P-TYPE');
  assert.equal(rule(base.replace('"last_sequence":7', '"last_sequence":7.0')), 'P-TYPE');
  assert.equal(rule(base.replace('"max_turns":3', '"max_turns":4294967296')), 'P-TYPE');
  assert.equal(rule(base.replace('"version":"spice.agent.snapshot/v1alpha2"', '"version":"x"').replace('"run_id":"run-1"', '"run_id":""')), 'P-VERSION');
  assert.equal(rule(base + ' {}'), 'P-TRAILING');
  assert.equal(rule('['.repeat(10001) + ']'.repeat(10001)), 'P-JSON');
});

// The order of P-VERSION among the decoding rules, as `snapshot validate` names them for a reader of
// v1alpha2 only (the Java PayloadV1alpha3Test): the version is named before an unknown member, and
// v1alpha3's plan_identity.workspace_fingerprint is a member v1alpha2 lacks.
test('version order: an unknown version with an unknown member is P-VERSION; a known version keeps P-UNKNOWN', () => {
  const base = kitBytes('payload-corpus/public/valid-01-minimal-suspended.json').toString();
  const check = (s) => { const v = validatePayload(Buffer.from(s)); return v.ok ? 'OK' : `${v.rule} at ${v.where}`; };
  const version = (s, v) => edit(s, '"version":"spice.agent.snapshot/v1alpha2"', `"version":"${v}"`);
  const unknown = (s) => edit(s, '"status":', '"extra":0,"status":');
  assert.equal(check(unknown(version(base, 'spice.agent.snapshot/v9'))), 'P-VERSION at version');
  assert.equal(check(edit(version(base, 'x'), '"max_turns":3', '"max_turns":3,"extra":0')), 'P-VERSION at version');
  assert.equal(check(unknown(edit(base, '"version":"spice.agent.snapshot/v1alpha2",', ''))), 'P-VERSION at version', 'no version');
  assert.equal(check(unknown(version(base, 'spice.agent.snapshot/v1alpha3'))), 'P-VERSION at version', 'v1alpha3 is not accepted here');
  assert.equal(check(unknown(base)), 'P-UNKNOWN at $');
  // outside plan_identity the workspace member is unknown in every format
  assert.equal(check(edit(base, '"status":', '"workspace_fingerprint":"","status":')), 'P-UNKNOWN at $');
  // a type error first keeps its place; an unknown version alone comes after trailing data
  const typed = edit(base, '"max_turns":3', '"max_turns":"3"');
  assert.equal(check(unknown(version(typed, 'x'))), 'P-TYPE at definition.max_turns');
  assert.equal(check(edit(version(base, 'x'), '"last_sequence":7', '"last_sequence":7.0')), 'P-TYPE at last_sequence');
  assert.equal(check(version(base, 'x') + 'x'), `P-TRAILING at byte ${Buffer.byteLength(version(base, 'x'))}`);
  assert.equal(check(version(base, 'x')), 'P-VERSION at version');
});

test('version order: v1alpha2 with plan_identity.workspace_fingerprint is P-VERSION, a type error inside it counting for v1alpha3 only', () => {
  const base = kitBytes('payload-corpus/public/valid-01-minimal-suspended.json').toString();
  const rule = (s) => validatePayload(Buffer.from(s)).rule;
  const check = (s) => { const v = validatePayload(Buffer.from(s)); return v.ok ? 'OK' : `${v.rule} at ${v.where}`; };
  const ws = `"sha256:${'f'.repeat(64)}"`;
  const withWs = (value = ws, name = 'workspace_fingerprint') => edit(base, '"tests:v1"', `"tests:v1","${name}":${value}`);
  assert.equal(check(withWs()), 'P-VERSION at version');
  // also when the member is null, empty, a number, or spelled in another case (Go's folding)
  for (const v of ['null', '""', '5', '[]']) assert.equal(rule(withWs(v)), 'P-VERSION', v);
  for (const n of ['Workspace_Fingerprint', 'wor\\u212aspace_fingerprint', 'WORK\u017fPACE_FINGERPRINT']) {
    assert.equal(rule(withWs(ws, n)), 'P-VERSION', n);
  }
  assert.equal(rule(withWs(ws, 'workspace_fingerprin')), 'P-UNKNOWN');
  // before trailing data and before an unknown member
  assert.equal(rule(withWs() + 'x'), 'P-VERSION');
  assert.equal(rule(edit(withWs(), '"status":', '"extra":0,"status":')), 'P-VERSION');
  // a type error outside it keeps its place, unless a type error inside it came first
  assert.equal(check(edit(withWs(), '"last_sequence":7', '"last_sequence":"7"')), 'P-TYPE at last_sequence');
  assert.equal(rule(edit(withWs('5'), '"last_sequence":7', '"last_sequence":"7"')), 'P-VERSION');
  assert.equal(check(edit(edit(base, '"max_turns":3', '"max_turns":"3"'), '"tests:v1"', '"tests:v1","workspace_fingerprint":5')),
    'P-TYPE at definition.max_turns', 'a type error before the member');
  // a syntax error still comes first
  assert.equal(rule(withWs().slice(0, -1)), 'P-JSON');
});

test('version order: the v1alpha3 corpus is refused for its version (what snapshot validate says where only v1alpha2 is accepted)', () => {
  const index = kitJson('payload-corpus/v1alpha3/index.json');
  const failures = [];
  for (const c of index.cases) {
    const v = validatePayload(kitBytes(`payload-corpus/v1alpha3/${c.file}`));
    const got = v.ok ? 'OK' : v.rule;
    // syntax first; otherwise the version, also before trailing data (the workspace member is there)
    const want = c.file === 'invalid-version-v1alpha2-payload.json' ? 'OK' // a valid v1alpha2 payload
      : ['P-SIZE', 'P-JSON'].includes(c.rule) ? c.rule : 'P-VERSION';
    if (got !== want) failures.push(`${c.file}: got ${got}, want ${want}`);
  }
  assert.deepEqual(failures, []);
  assert.ok(index.cases.length > 40);
});

function edit(s, from, to) {
  const out = s.replace(from, to);
  assert.notEqual(out, s, `no ${from}`);
  return out;
}

test('bin/canonicalize: OK for canonical files, REJECTED FILE RULE otherwise; exit 0 only when all are OK', (t) => {
  const bin = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../bin/canonicalize.js');
  const dir = path.join(KIT, 'payload-corpus/public');
  const index = kitJson('payload-corpus/public/index.json');
  const files = index.cases.map((c) => path.join(dir, c.file));
  const r = spawnSync(process.execPath, [bin, ...files], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines, index.cases.map((c) => (c.expected === 'valid' ? `OK ${path.join(dir, c.file)}` : `REJECTED ${path.join(dir, c.file)} ${c.rule}`)));
  const valid = index.cases.filter((c) => c.expected === 'valid').map((c) => path.join(dir, c.file));
  const transcripts = kitJson('transcripts/index.json').cases.map((c) => path.join(KIT, 'transcripts', c.file));
  assert.equal(spawnSync(process.execPath, [bin, ...valid, ...transcripts]).status, 0);
  const tmp = tempDir(t);
  fs.writeFileSync(path.join(tmp, 'big.json'), Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
  const big = spawnSync(process.execPath, [bin, path.join(tmp, 'big.json')], { encoding: 'utf8' });
  assert.equal(big.stdout, `REJECTED ${path.join(tmp, 'big.json')} P-SIZE\n`);
  assert.equal(big.status, 1);
  assert.equal(spawnSync(process.execPath, [bin], { encoding: 'utf8' }).status, 2);
});
