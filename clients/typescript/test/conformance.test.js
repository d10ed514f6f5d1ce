// Runs every scenario of spec-kit/conformance/scenarios against a real helper.
//
// The helper comes from the environment (the suite runner sets it):
//   SPICE_AUTHORITY_SOCKET=PATH         a helper already serving on this Unix socket, or
//   SPICE_AUTHORITY_TCP=127.0.0.1:PORT  with SPICE_AUTHORITY_TOKEN_FILE=FILE: one on loopback TCP, or
//   SPICE_AUTHORITY_JAR=quarkus-run.jar the runner starts its own helpers from this jar (one on a
//                                       socket, one on TCP; JAVA_HOME names a JDK 25)
//   SPICE_AUTHORITY_CONFORMANCE=skip    the runner designates that no helper is available: skipped
// With none of them the test fails and says what is missing (it never skips silently).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import { KIT } from '../testing/kit.js';
import { Executor, loadScenarios, runScenario, startHelper } from '../testing/conformance.js';

const CONFORMANCE = path.join(KIT, 'conformance');
const env = process.env;

function configured() {
  if (env.SPICE_AUTHORITY_SOCKET) return [{ label: 'socket', endpoint: { socket: env.SPICE_AUTHORITY_SOCKET } }];
  if (env.SPICE_AUTHORITY_TCP) {
    const m = /^(127\.[0-9.]+|\[::1\]):([0-9]+)$/.exec(env.SPICE_AUTHORITY_TCP);
    if (!m || !env.SPICE_AUTHORITY_TOKEN_FILE) return null;
    return [{ label: 'tcp', endpoint: { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]), tokenFile: env.SPICE_AUTHORITY_TOKEN_FILE } }];
  }
  if (env.SPICE_AUTHORITY_JAR) return [{ label: 'socket', jar: env.SPICE_AUTHORITY_JAR, transport: 'unix' }, { label: 'tcp', jar: env.SPICE_AUTHORITY_JAR, transport: 'tcp' }];
  return null;
}

const targets = configured();
const skip = env.SPICE_AUTHORITY_CONFORMANCE === 'skip' ? 'SPICE_AUTHORITY_CONFORMANCE=skip: the suite runner designated no helper' : false;

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
  });
}
