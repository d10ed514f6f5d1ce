// The TypeScript ten-line example of clients/README.md ("Ten-line examples"), run as written against a
// real helper: the block is saved as example.mjs next to node_modules/@spice-authority/client (a link to
// this package), so even its import specifier is unchanged; only the payload gets a run ID of its own.
// The helper: SPICE_AUTHORITY_SOCKET (clients/run-suites.sh), else one started from SPICE_AUTHORITY_JAR
// or the repository's packaged jar. Without either the test is skipped, unless
// SPICE_AUTHORITY_REQUIRE_HELPER=1 (the Maven build), where it fails.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KIT } from '../testing/kit.js';
import { startHelper } from '../testing/conformance.js';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPO = path.resolve(HERE, '../..');
const env = process.env;
const JAR = env.SPICE_AUTHORITY_JAR || path.join(REPO, 'src/app/target/quarkus-app/quarkus-run.jar');
const haveHelper = Boolean(env.SPICE_AUTHORITY_SOCKET) || fs.existsSync(JAR);
const skip = !haveHelper && env.SPICE_AUTHORITY_REQUIRE_HELPER !== '1' ? 'no helper: set SPICE_AUTHORITY_SOCKET or build the packaged jar' : false;

test('clients/README.md: the TypeScript ten-line example, as written', { skip }, async (t) => {
  assert.ok(haveHelper, `no helper: SPICE_AUTHORITY_SOCKET is not set and there is no packaged helper at ${JAR}`);
  let socket = env.SPICE_AUTHORITY_SOCKET;
  if (!socket) {
    const helper = await startHelper(JAR, 'unix');
    t.after(() => helper.stop());
    socket = helper.endpoint.socket;
  }
  const readme = fs.readFileSync(path.join(REPO, 'clients/README.md'), 'utf8');
  const m = /<!-- ts-ten:begin -->\n```js\n([\s\S]*?)```\n<!-- ts-ten:end -->/.exec(readme);
  assert.ok(m, 'no ts-ten block in clients/README.md');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spice-ts-ten-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'node_modules/@spice-authority'), { recursive: true });
  fs.symlinkSync(HERE, path.join(dir, 'node_modules/@spice-authority/client'), 'dir');
  fs.writeFileSync(path.join(dir, 'example.mjs'), m[1]);
  const runId = `ts-ten-${process.pid}-${Date.now()}`;
  const payload = fs.readFileSync(path.join(KIT, 'payload-corpus/public/valid-01-minimal-suspended.json'), 'utf8');
  fs.writeFileSync(path.join(dir, 'payload.json'), payload.replace('"run_id":"run-1"', `"run_id":"${runId}"`));
  const r = spawnSync(process.execPath, [path.join(dir, 'example.mjs'), socket, path.join(dir, 'payload.json')],
    { cwd: dir, encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'ACTIVE continue at 8\n');
});
