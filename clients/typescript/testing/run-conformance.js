#!/usr/bin/env node
// The conformance runner as a program (spec-kit/conformance/README.md "Running"):
//   node clients/typescript/testing/run-conformance.js --socket S | --tcp 127.0.0.1:PORT --token-file F | --jar quarkus-run.jar [NAME...]
// One line per scenario (PASS name / FAIL name: step N (do): …), then "N passed, N failed";
// exit 0 only when every scenario passed.
import path from 'node:path';
import { KIT } from './kit.js';
import { Executor, loadScenarios, runScenario, startHelper } from './conformance.js';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const socket = opt('--socket');
const tcp = opt('--tcp');
const tokenFile = opt('--token-file');
const jar = opt('--jar');
const names = args;
if ([socket, tcp, jar].filter(Boolean).length !== 1 || (tcp && !tokenFile)) {
  process.stderr.write('usage: run-conformance.js --socket S | --tcp 127.0.0.1:PORT --token-file F | --jar quarkus-run.jar [NAME...]\n');
  process.exit(2);
}
const kit = path.join(KIT, 'conformance');
let helper = null;
let endpoint;
if (jar) {
  helper = await startHelper(jar, 'unix');
  endpoint = helper.endpoint;
} else if (socket) {
  endpoint = { socket };
} else {
  const [host, port] = [tcp.slice(0, tcp.lastIndexOf(':')), Number(tcp.slice(tcp.lastIndexOf(':') + 1))];
  endpoint = { host, port, tokenFile };
}
let passed = 0;
let failed = 0;
try {
  const main = new Executor(endpoint);
  for (const { file, scenario } of loadScenarios(kit)) {
    if (names.length && !names.includes(scenario.name) && !names.includes(path.basename(file, '.json'))) continue;
    const r = await runScenario(endpoint, kit, scenario, main);
    if (r.passed) passed++;
    else failed++;
    process.stdout.write(r.passed ? `PASS ${r.name}\n` : `FAIL ${r.name}: ${r.message}\n`);
  }
} finally {
  await helper?.stop();
}
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
