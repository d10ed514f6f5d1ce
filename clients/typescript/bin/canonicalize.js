#!/usr/bin/env node
// canonicalize FILE...: one line per file, `OK FILE` when the payload is valid and already
// canonical, else `REJECTED FILE RULE` with the rule id `spice-authority snapshot validate`
// reports. Exit 0 only when every file is OK; 1 when one is rejected or unreadable; 2 for usage.
import { statSync, readFileSync } from 'node:fs';
import { MAX_PAYLOAD_BYTES, validatePayload } from '../src/payload.js';

const files = process.argv.slice(2);
if (files.length === 0 || files.includes('--help') || files.includes('-h')) {
  process.stderr.write('usage: canonicalize FILE...\n'
    + '  prints OK FILE for a valid, canonical v1alpha2 payload, else REJECTED FILE RULE (P-...);\n'
    + '  exit 0 only when every file is OK.\n');
  process.exit(files.length === 0 ? 2 : 0);
}
let allOk = true;
for (const file of files) {
  let line;
  try {
    // Files over 16 MiB are refused (P-SIZE) before they are read.
    const size = statSync(file).size;
    if (size === 0 || size > MAX_PAYLOAD_BYTES) {
      line = `REJECTED ${file} P-SIZE`;
    } else {
      const v = validatePayload(readFileSync(file));
      line = v.ok ? `OK ${file}` : `REJECTED ${file} ${v.rule}`;
    }
  } catch (e) {
    line = `REJECTED ${file} UNREADABLE (${e.code ?? e.message})`;
  }
  if (!line.startsWith('OK ')) allOk = false;
  process.stdout.write(line + '\n');
}
process.exitCode = allOk ? 0 : 1;
