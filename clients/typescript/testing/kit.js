// Test helpers: the repository's own spec kit (spec-kit/, nothing outside the repository) and temporary directories.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The repository's spec kit, or SPICE_SPEC_DIR when the suite runner names it. */
export const KIT = process.env.SPICE_SPEC_DIR || path.join(ROOT, 'spec-kit');

export function kitJson(rel) {
  return JSON.parse(fs.readFileSync(path.join(KIT, rel), 'utf8'));
}

export function kitBytes(rel) {
  return fs.readFileSync(path.join(KIT, rel));
}

/** A fresh 0700 directory, removed by the returned cleanup. */
export function tempDir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'spice-ts-'));
  fs.chmodSync(d, 0o700);
  t?.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}
