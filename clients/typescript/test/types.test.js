// The shipped declarations: every runtime export is declared and every declared value exists;
// `tsc --noEmit` over them (and types/usage.ts) when the dev dependency is installed (npm ci).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('index.d.ts declares exactly the runtime exports', async () => {
  const dts = fs.readFileSync(path.join(HERE, 'index.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/^export (?:class|function|const) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]);
  const runtime = Object.keys(await import('../index.js'));
  assert.deepEqual([...new Set(declared)].sort(), runtime.sort());
});

const tsc = path.join(HERE, 'node_modules', '.bin', 'tsc');
const required = process.env.SPICE_AUTHORITY_REQUIRE_TSC === '1';
test('tsc --noEmit over index.d.ts and types/usage.ts', { skip: fs.existsSync(tsc) || required ? false : 'typescript is not installed here (npm ci in clients/typescript)' }, () => {
  assert.ok(fs.existsSync(tsc), 'SPICE_AUTHORITY_REQUIRE_TSC=1 but clients/typescript/node_modules/.bin/tsc is missing (npm ci in clients/typescript)');
  const r = spawnSync(tsc, ['-p', path.join(HERE, 'tsconfig.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
