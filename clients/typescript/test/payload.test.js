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
