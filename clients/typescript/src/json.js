// A strict JSON reader for the helper's answers: integers are BigInt (unsigned 64-bit values such
// as run_generation and last_sequence must not pass through a double); other numbers are numbers.
import { GoJsonReader } from './gojson.js';

const MAX_DEPTH = 512;

/** @param {Uint8Array} bytes @returns {unknown} @throws {Error} on anything but one JSON value */
export function parseJson(bytes) {
  const r = new GoJsonReader(bytes);
  const v = value(r, 0);
  r.skipWhitespace();
  if (!r.atEnd()) throw new Error('data after the JSON value');
  return v;
}

function value(r, depth) {
  if (depth > MAX_DEPTH) throw new Error('JSON nests too deeply');
  switch (r.peekKind()) {
    case '{': {
      r.beginObject();
      const o = Object.create(null);
      let key;
      let first = true;
      while ((key = r.nextMember(first)) !== null) {
        first = false;
        o[key] = value(r, depth + 1);
      }
      return o;
    }
    case '[': {
      r.beginArray();
      const a = [];
      let first = true;
      while (r.nextElement(first)) {
        first = false;
        a.push(value(r, depth + 1));
      }
      return a;
    }
    case '"': return r.readString();
    case 'n': r.readNull(); return null;
    case 't': case 'f': return r.readBoolean();
    default: {
      const start = r.pos;
      r.scanNumber();
      const text = Buffer.from(r.in.subarray(start, r.pos)).toString('latin1');
      return /^-?(0|[1-9][0-9]*)$/.test(text) ? BigInt(text) : Number(text);
    }
  }
}
