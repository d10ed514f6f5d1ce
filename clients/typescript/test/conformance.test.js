// Runs every scenario of spec-kit/conformance/scenarios against a real helper.
//
// The helper comes from the environment (clients/run-suites.sh sets SPICE_AUTHORITY_SOCKET and
// SPICE_AUTHORITY_JAR):
//   SPICE_AUTHORITY_SOCKET=PATH          a helper serving on this Unix socket;
//   SPICE_AUTHORITY_TCP=127.0.0.1:PORT   with SPICE_AUTHORITY_TOKEN_FILE=FILE: a helper on loopback TCP;
//   SPICE_AUTHORITY_JAR=quarkus-run.jar  the runner starts its own helper from this jar for each
//                                        transport not given above (a socket, and TCP with its token
//                                        and endpoint proof); JAVA_HOME names a JDK 25.
//   SPICE_AUTHORITY_CONFORMANCE=skip     the suite runner designates that no helper is available
//                                        (ignored when SPICE_AUTHORITY_REQUIRE_HELPER=1).
// With none of them the test fails and says what is missing (it never skips silently).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KIT } from '../testing/kit.js';
import { Executor, endpointOf, loadScenarios, runScenario, startHelper } from '../testing/conformance.js';
import {
  AuthorityClient, ImportRefused, ToolDefinition, importRun, planMatches, parseEnvelope,
} from '../index.js';

const CONFORMANCE = path.join(KIT, 'conformance');
const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;

function configured() {
  const out = [];
  if (env.SPICE_AUTHORITY_SOCKET) out.push({ label: 'socket', endpoint: { socket: env.SPICE_AUTHORITY_SOCKET } });
  if (env.SPICE_AUTHORITY_TCP) {
    const m = /^(127\.[0-9.]+|\[::1\]):([0-9]+)$/.exec(env.SPICE_AUTHORITY_TCP);
    if (!m || !env.SPICE_AUTHORITY_TOKEN_FILE) return null;
    out.push({ label: 'tcp', endpoint: { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]), tokenFile: env.SPICE_AUTHORITY_TOKEN_FILE } });
  }
  if (env.SPICE_AUTHORITY_JAR) {
    if (!env.SPICE_AUTHORITY_SOCKET) out.push({ label: 'socket (own helper)', jar: env.SPICE_AUTHORITY_JAR, transport: 'unix' });
    if (!env.SPICE_AUTHORITY_TCP) out.push({ label: 'tcp (own helper)', jar: env.SPICE_AUTHORITY_JAR, transport: 'tcp' });
  }
  return out.length ? out : null;
}

const targets = configured();
const skip = env.SPICE_AUTHORITY_CONFORMANCE === 'skip' && env.SPICE_AUTHORITY_REQUIRE_HELPER !== '1' ? 'SPICE_AUTHORITY_CONFORMANCE=skip: the suite runner designated no helper' : false;

test('conformance: a helper endpoint is configured', { skip }, () => {
  assert.ok(targets !== null, 'no helper for the conformance scenarios: set SPICE_AUTHORITY_SOCKET (a serving helper\'s socket), '
    + 'SPICE_AUTHORITY_TCP=127.0.0.1:PORT with SPICE_AUTHORITY_TOKEN_FILE, or SPICE_AUTHORITY_JAR (src/app/target/quarkus-app/quarkus-run.jar, '
    + 'built with ./mvnw -B -o package -DskipTests -pl src/app -am), or SPICE_AUTHORITY_CONFORMANCE=skip to skip on purpose');
  assert.ok(fs.existsSync(path.join(CONFORMANCE, 'scenarios')), `no scenarios in ${CONFORMANCE}`);
});

for (const target of targets ?? []) {
  test(`conformance scenarios over ${target.label}`, { skip, timeout: 300000 }, async (t) => {
    let helper = null;
    let endpoint = target.endpoint;
    if (target.jar) {
      helper = await startHelper(target.jar, target.transport);
      t.after(() => helper.stop());
      endpoint = helper.endpoint;
    }
    const scenarios = loadScenarios(CONFORMANCE);
    assert.ok(scenarios.length > 0, 'no scenarios');
    const main = new Executor(endpoint);
    const failures = [];
    for (const { scenario } of scenarios) {
      const r = await runScenario(endpoint, CONFORMANCE, scenario, main);
      t.diagnostic(`${r.passed ? 'PASS' : 'FAIL'} ${r.name}${r.passed ? '' : `: ${r.message}`}`);
      if (!r.passed) failures.push(`${r.name}: ${r.message}`);
    }
    t.diagnostic(`${scenarios.length - failures.length} passed, ${failures.length} failed`);
    assert.deepEqual(failures, []);

    await t.test('importRun end to end: a refused plan aborts (the run stays importable), a matching plan imports', async () => {
      const client = new AuthorityClient(endpointOf(endpoint));
      const runId = `${Math.random().toString(16).slice(2, 10)}-import-run`;
      const payload = fs.readFileSync(path.join(CONFORMANCE, 'payloads', 'suspended-turn-1.json'), 'latin1').split('${run}').join(runId);
      const a = await client.openSession();
      const b = await client.openSession();
      try {
        await client.start(a, runId);
        const envelope = await client.sign(a, runId, Buffer.from(payload, 'latin1'));
        assert.equal(parseEnvelope(envelope).runId, runId);
        await client.release(a, runId);
        // The corpus plan: compatibility tests:v1, plan generation-1, the one tool "read".
        const read = new ToolDefinition({ name: 'read', description: 'Read a fixture.', inputSchema: '{}', effect: 'read_only', replaySafety: 'safe', capabilities: ['filesystem.read'] });
        const log = [];
        const refusing = {
          checkPlan: (snapshot) => { if (!planMatches(snapshot.planIdentity, [])) throw new Error('the leased plan differs from the recorded one'); },
          commit: () => log.push('commit'),
          stop: () => log.push('stop'),
        };
        await assert.rejects(importRun({ client, session: b, envelope, ...refusing }), (e) => e instanceof ImportRefused && e.reason === 'PLAN_REFUSED');
        assert.deepEqual(log, []);
        const after = await client.run(runId);
        assert.equal(after.phase, 'SUSPENDED');
        assert.equal(after.owned, false);
        const r = await importRun({
          client, session: b, envelope,
          checkPlan: (snapshot) => { if (!planMatches(snapshot.planIdentity, [read])) throw new Error('plan changed'); },
          commit: (snapshot, tx) => ({ runId: snapshot.runId, next: tx.nextSequence }),
          stop: () => { throw new Error('not reached'); },
        });
        assert.equal(r.view.phase, 'ACTIVE');
        assert.equal(r.view.runGeneration, 2n);
        assert.equal(r.run.next, 8n);
        await client.release(b, runId);
      } finally {
        await client.closeSession(a).catch(() => {});
        await client.closeSession(b).catch(() => {});
      }
    });

    await t.test('the README example, as written', { skip: endpoint.socket ? false : 'the example uses a socket' }, async (tt) => {
      const readme = fs.readFileSync(path.join(HERE, 'README.md'), 'utf8');
      const m = /<!-- ts-example:begin -->\n```js\n([\s\S]*?)```\n<!-- ts-example:end -->/.exec(readme);
      assert.ok(m, 'no example block in README.md');
      // A run ID of its own (the helper is shared): the only change to the block and the payload.
      const runId = `${Math.random().toString(16).slice(2, 10)}-readme`;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spice-ts-readme-'));
      tt.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const code = m[1].split("'run-1'").join(`'${runId}'`).replace("'@spice-authority/client'", `'${pathToFileURL(path.join(HERE, 'index.js'))}'`);
      fs.writeFileSync(path.join(dir, 'example.mjs'), code);
      const payload = fs.readFileSync(path.join(KIT, 'payload-corpus/public/valid-01-minimal-suspended.json'), 'utf8');
      fs.writeFileSync(path.join(dir, 'payload.json'), payload.replace('"run_id":"run-1"', `"run_id":"${runId}"`));
      const r = spawnSync(process.execPath, [path.join(dir, 'example.mjs'), endpoint.socket, path.join(dir, 'payload.json')], { encoding: 'utf8', timeout: 60000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, 'ACTIVE 2n continue at 8n\n');
    });
  });
}
