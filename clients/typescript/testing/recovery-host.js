#!/usr/bin/env node
// A scripted agent host for the cross-language recovery test (clients/python/tests/test_cross_language.py).
//
//   node clients/typescript/testing/recovery-host.js --socket S --role first|import \
//       --run-id ID --envelope FILE --ledger FILE
//
// The same script as clients/python/testing/recovery_host.py (the two must stay alike): a run of three
// turns; each turn is four events (the user's input, the model's call of the mutating tool
// append_ledger, its result, the answer), so after turn t the last sequence is 4t. The tool appends
// one line `<run_id> <call_id> typescript <pid>` to the ledger and fsyncs it: a side effect that ran
// twice shows as two lines.
//
// first: starts the run, runs turn 1, suspends it (signs the payload), writes the envelope to FILE
// (atomically), prints `suspended RUN_ID LAST_SEQUENCE`, then waits, holding the run's lease, until it
// is killed (the test kills it with SIGKILL).
// import: imports the envelope (the import order with the plan check), continues at the next sequence
// with the turns not yet done, signs the terminal (completed) payload, and prints one JSON line:
// {"run_id", "imported_last_sequence", "resumed_at", "final_last_sequence", "phase"}.
// Exit 0 on success; a failure is one line on standard error and exit 1 (never a token or session id).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  AuthorityClient, SnapshotBuilder, ToolDefinition, importRun, parseEnvelope, planIdentity, planMatches,
  staticToolPlanId, unixEndpoint,
} from '../index.js';

const TURNS = 3;
const EVENTS_PER_TURN = 4;
const TOOLS = [new ToolDefinition({ name: 'append_ledger', description: 'Appends one entry to the ledger.',
  inputSchema: '{"type":"object","properties":{"entry":{"type":"string"}}}', effect: 'mutating',
  replaySafety: 'unsafe', capabilities: ['filesystem.write'] })];
const IDENTITY = planIdentity(['stage:kernel', 'provider:scripted@1', 'broker:injected'], staticToolPlanId(TOOLS),
  'recovery-host:v1', TOOLS);

/** The mutating tool: one line, fsynced before the call returns. */
function appendLedger(ledger, runId, callId) {
  const fd = fs.openSync(ledger, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
  try {
    fs.writeSync(fd, `${runId} ${callId} typescript ${process.pid}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Runs one turn from nextSequence; returns the turn's last sequence. */
function runTurn(ledger, runId, turn, nextSequence) {
  if (nextSequence !== BigInt(EVENTS_PER_TURN * (turn - 1) + 1)) {
    throw new Error(`turn ${turn} cannot start at sequence ${nextSequence}`);
  }
  appendLedger(ledger, runId, `t${turn}-write`);
  return nextSequence + BigInt(EVENTS_PER_TURN - 1);
}

function payload(runId, turns, lastSequence, status) {
  const b = new SnapshotBuilder().runId(runId).definition({ name: 'recovery-host', model: 'scripted', maxTurns: TURNS })
    .completedTurns(turns).planIdentity(IDENTITY).lastSequence(lastSequence).status(status);
  for (let t = 1; t <= turns; t++) {
    const callId = `t${t}-write`;
    b.addMessage({ id: `input-${t}`, role: 'user', parts: [{ kind: 'text', text: `turn ${t}` }] });
    b.addMessage({ id: `call-${t}`, role: 'assistant',
      parts: [{ kind: 'tool_call', name: 'append_ledger', callId, data: { entry: `turn ${t} done` } }] });
    b.addMessage({ id: `result-${t}`, role: 'tool',
      parts: [{ kind: 'tool_result', name: 'append_ledger', callId, data: { ok: true } }] });
    b.addMessage({ id: `answer-${t}`, role: 'assistant', parts: [{ kind: 'text', text: `turn ${t} done` }] });
  }
  return b.build();
}

async function first(client, runId, envelopeFile, ledger) {
  const session = await client.openSession();
  await client.start(session, runId);
  const last = runTurn(ledger, runId, 1, 1n);
  const envelope = await client.sign(session, runId, payload(runId, 1, last, 'suspended'));
  const tmp = `${envelopeFile}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, envelope);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, envelopeFile);
  process.stdout.write(`suspended ${runId} ${last}\n`);
  setInterval(() => {}, 1 << 30); // holds the lease until killed
}

async function importAndComplete(client, runId, envelopeFile, ledger) {
  const envelope = new Uint8Array(fs.readFileSync(envelopeFile));
  const importedLast = parseEnvelope(envelope).lastSequence;
  const session = await client.openSession();
  const { snapshot, tx } = await importRun({
    client, session, envelope, commit: (s) => s.runId, stop: () => {},
    checkPlan: (s) => { if (!planMatches(s.planIdentity, TOOLS)) throw new Error('the plan changed'); },
  });
  const expected = [];
  for (let t = 1; t <= snapshot.completedTurns; t++) for (const k of ['input', 'call', 'result', 'answer']) expected.push(`${k}-${t}`);
  if (snapshot.runId !== runId || snapshot.history.map((m) => m.id).join() !== expected.join()) {
    throw new Error("the imported snapshot is not this script's run");
  }
  const resumedAt = tx.nextSequence;
  let seq = resumedAt;
  for (let turn = snapshot.completedTurns + 1; turn <= TURNS; turn++) seq = runTurn(ledger, runId, turn, seq) + 1n;
  const final = seq - 1n;
  await client.sign(session, runId, payload(runId, TURNS, final, 'completed'));
  const { phase } = await client.run(runId);
  await client.closeSession(session);
  process.stdout.write(JSON.stringify({ run_id: runId, imported_last_sequence: Number(importedLast),
    resumed_at: Number(resumedAt), final_last_sequence: Number(final), phase }) + '\n');
}

const { values: a } = parseArgs({ options: {
  socket: { type: 'string' }, role: { type: 'string' }, 'run-id': { type: 'string' },
  envelope: { type: 'string' }, ledger: { type: 'string' },
} });
for (const k of ['socket', 'role', 'run-id', 'envelope', 'ledger']) {
  if (!a[k] || (k === 'role' && !['first', 'import'].includes(a[k]))) {
    process.stderr.write('usage: recovery-host.js --socket S --role first|import --run-id ID --envelope FILE --ledger FILE\n');
    process.exit(2);
  }
}
const client = new AuthorityClient(unixEndpoint(a.socket));
try {
  if (a.role === 'first') await first(client, a['run-id'], path.resolve(a.envelope), path.resolve(a.ledger));
  else await importAndComplete(client, a['run-id'], path.resolve(a.envelope), path.resolve(a.ledger));
} catch (e) {
  process.stderr.write(`recovery-host (${a.role}): ${e?.name ?? 'Error'}: ${e?.message ?? e}\n`);
  process.exit(1);
}
