// importRun: the import order of Engine.importRun, against a scripted client.
import test from 'node:test';
import assert from 'node:assert/strict';
import { kitJson } from '../testing/kit.js';
import {
  importRun, planCheck, ImportRefused, ImportUncertain, HelperTimeout, HelperUnreachable, Session, ToolDefinition, decodeSnapshot, parseEnvelope,
} from '../index.js';
import { problemOf } from '../src/errors.js';

const ENVELOPE = new Uint8Array(Buffer.from(kitJson('vectors/envelope.json').cases[0].envelope_hex, 'hex')); // run-1, seq 9, suspended
const COMPLETED = new Uint8Array(Buffer.from(kitJson('vectors/envelope.json').cases[1].envelope_hex, 'hex'));
const TX = Object.freeze({ importId: 'tx1', runId: 'run-1', lastSequence: 9n, nextSequence: 10n });
const VIEW = Object.freeze({ runId: 'run-1', phase: 'ACTIVE', runGeneration: 2n, owned: true, fenced: false });
const p = (code, status = 409) => problemOf({ status, code, title: '', detail: code, rule: null, retryAfterMs: null }, false);

/** A client whose calls are logged in `log`; `fail[call]` is thrown (once per entry) instead of answering. */
function scripted(fail = {}) {
  const log = [];
  const step = async (name, value) => {
    log.push(name);
    const f = fail[name];
    if (Array.isArray(f) ? f.length > 0 : f) throw Array.isArray(f) ? f.shift() : f;
    return value;
  };
  return {
    log,
    prepareImport: () => step('prepare', TX),
    consume: () => step('consume', { ...VIEW, phase: 'IMPORTING', owned: false }),
    activate: () => step('activate', VIEW),
    abortImport: () => step('abort'),
    release: () => step('release'),
  };
}

function hooks(log, o = {}) {
  return {
    checkPlan: async (s, tx) => { log.push('check'); assert.equal(s.runId, 'run-1'); assert.equal(tx.importId, 'tx1'); if (o.refuse) throw new Error('plan changed'); },
    commit: async () => { log.push('commit'); if (o.commitFails) throw new Error('disk full'); return 'RUN'; },
    stop: async (run) => { log.push(`stop ${run}`); },
  };
}

const session = new Session('s', 1234);

test('importRun: prepare, check, consume, commit, activate, in that order; the run continues at next_sequence', async () => {
  const c = scripted();
  const r = await importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log) });
  assert.deepEqual(c.log, ['prepare', 'check', 'consume', 'commit', 'activate']);
  assert.equal(r.tx.nextSequence, 10n);
  assert.equal(r.run, 'RUN');
  assert.equal(r.snapshot.lastSequence, 9n);
});

test('importRun: a refused plan check aborts the prepared import before consume', async () => {
  const c = scripted();
  await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log, { refuse: true }) }),
    (e) => e instanceof ImportRefused && e.reason === 'PLAN_REFUSED');
  assert.deepEqual(c.log, ['prepare', 'check', 'abort']);
});

test('importRun: a malformed or terminal envelope is refused; a terminal one after prepare, with an abort', async () => {
  const c = scripted();
  await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE.subarray(0, 40), ...hooks(c.log) }), (e) => e.reason === 'MALFORMED');
  assert.deepEqual(c.log, []);
  const c2 = scripted();
  c2.prepareImport = async () => { c2.log.push('prepare'); return { ...TX, runId: 'run-<é>&', lastSequence: 33n }; };
  await assert.rejects(importRun({ client: c2, session, envelope: COMPLETED, ...hooks(c2.log) }), (e) => e.reason === 'NOT_SUSPENDED' && /terminal/.test(e.message));
  assert.deepEqual(c2.log, ['prepare', 'abort']);
});

test('importRun: an envelope whose fields disagree with its payload is MALFORMED before anything is sent', async () => {
  const forged = Buffer.from(ENVELOPE);
  const at = forged.indexOf(Buffer.from([0x12, 0x05, ...Buffer.from('run-1')]));
  forged[at + 6] = '2'.charCodeAt(0); // run_id run-2, the payload still says run-1
  const c = scripted();
  await assert.rejects(importRun({ client: c, session, envelope: new Uint8Array(forged), ...hooks(c.log) }),
    (e) => e instanceof ImportRefused && e.reason === 'MALFORMED' && /match the payload/.test(e.message));
  assert.deepEqual(c.log, []);
});

test('importRun: a helper preparing another run or sequence than the envelope is refused and aborted', async () => {
  const c = scripted();
  c.prepareImport = async () => { c.log.push('prepare'); return { ...TX, lastSequence: 8n }; };
  await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log) }), (e) => e.reason === 'MALFORMED');
  assert.deepEqual(c.log, ['prepare', 'abort']);
});

test('importRun: a refused prepare is AUTHORITY_REFUSED, nothing else is called; a lost answer is asked once more', async () => {
  const c = scripted({ prepare: p('busy') });
  await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log) }), (e) => e.reason === 'AUTHORITY_REFUSED');
  assert.deepEqual(c.log, ['prepare']);
  const lost = scripted({ prepare: [new HelperTimeout('lost')] });
  await importRun({ client: lost, session, envelope: ENVELOPE, ...hooks(lost.log) });
  assert.deepEqual(lost.log, ['prepare', 'prepare', 'check', 'consume', 'commit', 'activate']);
  const unreachable = scripted({ prepare: [new HelperUnreachable('down')] });
  await assert.rejects(importRun({ client: unreachable, session, envelope: ENVELOPE, ...hooks(unreachable.log) }), (e) => e.reason === 'AUTHORITY_REFUSED');
  assert.deepEqual(unreachable.log, ['prepare'], 'nothing was sent: not asked again by the import');
});

test('importRun: a clean refusal of consume is CONSUME_REFUSED and aborts; an uncertain consume is ImportUncertain, never retried', async () => {
  const refused = scripted({ consume: p('state_conflict') });
  await assert.rejects(importRun({ client: refused, session, envelope: ENVELOPE, ...hooks(refused.log) }), (e) => e instanceof ImportRefused && e.reason === 'CONSUME_REFUSED');
  assert.deepEqual(refused.log, ['prepare', 'check', 'consume', 'abort']);
  for (const failure of [p('uncertain', 500), new HelperTimeout('no answer')]) {
    const c = scripted({ consume: failure });
    await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log) }), (e) => e instanceof ImportUncertain && e.runId === 'run-1');
    assert.deepEqual(c.log, ['prepare', 'check', 'consume', 'abort']);
  }
});

test('importRun: a failed commit after consume is ImportUncertain; the import is released, activate never sent', async () => {
  const c = scripted();
  await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log, { commitFails: true }) }), ImportUncertain);
  assert.deepEqual(c.log, ['prepare', 'check', 'consume', 'commit', 'abort']);
});

test('importRun: an uncertain activate stops the committed run before the import is released, then hands back the lease', async () => {
  for (const failure of [p('uncertain', 500), new HelperTimeout('no answer'), p('state_conflict')]) {
    const c = scripted({ activate: failure, abort: p('uncertain', 500) });
    await assert.rejects(importRun({ client: c, session, envelope: ENVELOPE, ...hooks(c.log) }), (e) => e instanceof ImportUncertain && /stopped/.test(e.message));
    assert.deepEqual(c.log, ['prepare', 'check', 'consume', 'commit', 'activate', 'stop RUN', 'abort', 'release']);
  }
});

test('planCheck: the reference engine\'s checks, in its order', async () => {
  const v = kitJson('vectors/plan-identity.json');
  const defs = Object.fromEntries(v.tools.map((t) => [t.key, new ToolDefinition({ name: t.name, description: t.description,
    inputSchema: t.input_schema_utf8, effect: t.effect, replaySafety: t.replay_safety, capabilities: t.capabilities })]));
  const snapshot = decodeSnapshot(parseEnvelope(ENVELOPE).payload); // plan generation-7: read, write_file
  const compiled = [...snapshot.planIdentity.compiledIdentities].reverse();
  const compat = snapshot.planIdentity.snapshotCompatibilityIdentity;
  const leased = [];
  const lease = (id) => { leased.push(id); return [defs.write_file, defs.read]; };
  assert.deepEqual((await planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled, lease })(snapshot)).length, 2);
  assert.deepEqual(leased, ['generation-7']);
  await assert.rejects(planCheck({ compatibilityIdentity: 'other', compiledIdentities: compiled, lease })(snapshot), /another compatibility/);
  await assert.rejects(planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled.slice(1), lease })(snapshot), /another compatibility/);
  await assert.rejects(planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled, lease: () => [defs.read] })(snapshot), /tool definition changed/);
  await assert.rejects(planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled, lease: () => [defs['read-bare'], defs.write_file] })(snapshot), /tool definition changed/);
  await assert.rejects(planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled, lease: () => { throw new Error('plan unavailable'); } })(snapshot), /plan unavailable/);
  assert.throws(() => planCheck({ compatibilityIdentity: '', compiledIdentities: compiled, lease }), TypeError);
  const c = scripted();
  await importRun({ client: c, session, envelope: ENVELOPE, checkPlan: planCheck({ compatibilityIdentity: compat, compiledIdentities: compiled, lease }),
    commit: () => 'RUN', stop: () => {} });
  assert.deepEqual(c.log, ['prepare', 'consume', 'activate']);
});
