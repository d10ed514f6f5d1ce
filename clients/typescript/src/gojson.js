// Go `encoding/json` (classic v1) syntax, string decoding and encoding, byte for byte
// (wire-format.md b.2 and b.3). A port of the Java GoJsonReader/GoJsonWriter of src/snapshot.
//
// Guarantees: the reader works on bytes (a Uint8Array), never on a JS string, so invalid UTF-8
// inside strings is seen exactly as Go sees it; skipping is iterative (hostile nesting cannot
// overflow the stack); nesting deeper than 10,000 levels is a syntax error, as in Go.

/** A JSON syntax error at a byte offset. */
export class JsonSyntaxError extends Error {
  /** @param {string} what @param {number} offset */
  constructor(what, offset) {
    super(`${what} (byte ${offset})`);
    this.name = 'JsonSyntaxError';
    this.offset = offset;
  }
}

export const MAX_DEPTH = 10000;

const QUOTE = 0x22, BSLASH = 0x5c;

function hexValue(b) {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
}

/**
 * Length of the valid UTF-8 sequence at `i` (Go's utf8.DecodeRune acceptance: no overlongs, no
 * surrogates, at most U+10FFFF), or 0 when invalid.
 * @param {Uint8Array} s @param {number} i @param {number} stop
 */
export function utf8SequenceLength(s, i, stop) {
  const b0 = s[i];
  if (b0 < 0x80) return 1;
  if (b0 < 0xc2) return 0;
  const cont = (b) => (b & 0xc0) === 0x80;
  if (b0 < 0xe0) return i + 1 < stop && cont(s[i + 1]) ? 2 : 0;
  if (b0 < 0xf0) {
    if (i + 2 >= stop) return 0;
    const b1 = s[i + 1];
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return b1 >= lo && b1 <= hi && cont(s[i + 2]) ? 3 : 0;
  }
  if (b0 < 0xf5) {
    if (i + 3 >= stop) return 0;
    const b1 = s[i + 1];
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    return b1 >= lo && b1 <= hi && cont(s[i + 2]) && cont(s[i + 3]) ? 4 : 0;
  }
  return 0;
}

/** Go's utf8.Valid. @param {Uint8Array} s */
export function isValidUtf8(s, from = 0, to = s.length) {
  let i = from;
  while (i < to) {
    if (s[i] < 0x80) { i++; continue; }
    const n = utf8SequenceLength(s, i, to);
    if (n === 0) return false;
    i += n;
  }
  return true;
}

/** A pull reader over one UTF-8 JSON document with Go's syntax and string semantics. */
export class GoJsonReader {
  /** @param {Uint8Array} input */
  constructor(input, from = 0, to = input.length) {
    this.in = input;
    this.pos = from;
    this.end = to;
    this.depth = 0;
    /** whether the last readString() substituted U+FFFD for invalid input */
    this.substituted = false;
  }

  error(what) {
    return new JsonSyntaxError(what, this.pos);
  }

  skipWhitespace() {
    const a = this.in;
    while (this.pos < this.end) {
      const b = a[this.pos];
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) this.pos++;
      else return;
    }
  }

  atEnd() {
    return this.pos >= this.end;
  }

  peek() {
    this.skipWhitespace();
    return this.pos < this.end ? this.in[this.pos] : -1;
  }

  /** '{', '[', '"', 'n', 't', 'f' or '0' (number), as a char. */
  peekKind() {
    const c = this.peek();
    if (c < 0) throw this.error('unexpected end of JSON input');
    switch (c) {
      case 0x7b: return '{';
      case 0x5b: return '[';
      case 0x22: return '"';
      case 0x6e: return 'n';
      case 0x74: return 't';
      case 0x66: return 'f';
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return '0';
        throw this.error('invalid character looking for beginning of value');
    }
  }

  push() {
    if (++this.depth > MAX_DEPTH) throw this.error('exceeded max depth');
  }

  beginObject() { this.pos++; this.push(); }
  beginArray() { this.pos++; this.push(); }

  /** The next member's decoded name (colon consumed), or null after the closing brace. */
  nextMember(first) {
    let c = this.peek();
    if (!first) {
      if (c === 0x2c) {
        this.pos++;
        c = this.peek();
        if (c !== QUOTE) throw this.error('invalid character looking for beginning of object key string');
      } else if (c === 0x7d) {
        this.pos++; this.depth--; return null;
      } else {
        throw c < 0 ? this.error('unexpected end of JSON input') : this.error('invalid character after object key:value pair');
      }
    } else if (c === 0x7d) {
      this.pos++; this.depth--; return null;
    } else if (c !== QUOTE) {
      throw c < 0 ? this.error('unexpected end of JSON input') : this.error('invalid character looking for beginning of object key string');
    }
    const name = this.readString();
    if (this.peek() !== 0x3a) throw this.error('invalid character after object key');
    this.pos++;
    return name;
  }

  /** True when an element follows, false after the closing bracket. */
  nextElement(first) {
    const c = this.peek();
    if (c === 0x5d && first) { this.pos++; this.depth--; return false; }
    if (first) {
      if (c < 0) throw this.error('unexpected end of JSON input');
      return true;
    }
    if (c === 0x2c) { this.pos++; this.peekKind(); return true; }
    if (c === 0x5d) { this.pos++; this.depth--; return false; }
    throw c < 0 ? this.error('unexpected end of JSON input') : this.error('invalid character after array element');
  }

  readNull() { this.literal('null'); }

  readBoolean() {
    if (this.in[this.pos] === 0x74) { this.literal('true'); return true; }
    this.literal('false');
    return false;
  }

  literal(word) {
    for (let i = 0; i < word.length; i++) {
      if (this.pos >= this.end) throw this.error('unexpected end of JSON input');
      if (this.in[this.pos] !== word.charCodeAt(i)) throw this.error('invalid character in literal ' + word);
      this.pos++;
    }
  }

  /**
   * Consumes a number literal; returns its value as a BigInt when it is a plain unsigned decimal
   * integer below 2^64, else null.
   * @returns {bigint|null}
   */
  readNumberAsUnsigned() {
    const start = this.pos;
    this.scanNumber();
    for (let i = start; i < this.pos; i++) {
      const d = this.in[i];
      if (d < 0x30 || d > 0x39) return null;
    }
    const v = BigInt(Buffer.from(this.in.buffer, this.in.byteOffset + start, this.pos - start).toString('latin1'));
    return v > 0xffffffffffffffffn ? null : v;
  }

  scanNumber() {
    const a = this.in;
    if (this.pos < this.end && a[this.pos] === 0x2d) this.pos++;
    if (this.pos >= this.end) throw this.error('unexpected end of JSON input');
    const isDigit = (b) => b >= 0x30 && b <= 0x39;
    if (a[this.pos] === 0x30) {
      this.pos++;
    } else if (a[this.pos] >= 0x31 && a[this.pos] <= 0x39) {
      while (this.pos < this.end && isDigit(a[this.pos])) this.pos++;
    } else {
      throw this.error('invalid character in numeric literal');
    }
    if (this.pos < this.end && a[this.pos] === 0x2e) {
      this.pos++;
      if (this.pos >= this.end || !isDigit(a[this.pos])) {
        throw this.pos >= this.end ? this.error('unexpected end of JSON input') : this.error('invalid character after decimal point in numeric literal');
      }
      while (this.pos < this.end && isDigit(a[this.pos])) this.pos++;
    }
    if (this.pos < this.end && (a[this.pos] === 0x65 || a[this.pos] === 0x45)) {
      this.pos++;
      if (this.pos < this.end && (a[this.pos] === 0x2b || a[this.pos] === 0x2d)) this.pos++;
      if (this.pos >= this.end || !isDigit(a[this.pos])) {
        throw this.pos >= this.end ? this.error('unexpected end of JSON input') : this.error('invalid character in exponent of numeric literal');
      }
      while (this.pos < this.end && isDigit(a[this.pos])) this.pos++;
    }
  }

  /** Reads and decodes the string at the current position (which must be '"'). */
  readString() {
    this.substituted = false;
    const start = this.pos + 1;
    const simple = this.scanString();
    const stop = this.pos - 1;
    // Printable ASCII without escapes: latin1 of those bytes is the text itself.
    if (simple) return stop === start ? '' : Buffer.from(this.in.buffer, this.in.byteOffset + start, stop - start).toString('latin1');
    return this.decodeSlow(start, stop);
  }

  /** Checks a string's syntax and moves past it; true when it is printable ASCII without escapes. */
  scanString() {
    const a = this.in;
    this.pos++;
    let simple = true;
    for (;;) {
      if (this.pos >= this.end) throw this.error('unexpected end of JSON input');
      const b = a[this.pos];
      if (b === QUOTE) { this.pos++; return simple; }
      if (b === BSLASH) {
        simple = false;
        this.pos++;
        if (this.pos >= this.end) throw this.error('unexpected end of JSON input');
        const e = a[this.pos];
        switch (e) {
          case 0x22: case 0x5c: case 0x2f: case 0x62: case 0x66: case 0x6e: case 0x72: case 0x74:
            this.pos++;
            break;
          case 0x75:
            this.pos++;
            for (let k = 0; k < 4; k++) {
              if (this.pos >= this.end) throw this.error('unexpected end of JSON input');
              if (hexValue(a[this.pos]) < 0) throw this.error('invalid character in \\u hexadecimal character escape');
              this.pos++;
            }
            break;
          default:
            throw this.error('invalid character in string escape code');
        }
        continue;
      }
      if (b < 0x20) throw this.error('invalid character in string literal');
      if (b >= 0x80) simple = false;
      this.pos++;
    }
  }

  u4(at) {
    const a = this.in;
    return (hexValue(a[at]) << 12) | (hexValue(a[at + 1]) << 8) | (hexValue(a[at + 2]) << 4) | hexValue(a[at + 3]);
  }

  decodeSlow(start, stop) {
    const a = this.in;
    /** @type {number[]} */
    let units = [];
    const parts = [];
    const flush = () => { if (units.length) { parts.push(String.fromCharCode.apply(null, units)); units = []; } };
    let i = start;
    while (i < stop) {
      if (units.length > 8192) flush();
      const b = a[i];
      if (b === BSLASH) {
        const e = a[i + 1];
        switch (e) {
          case 0x22: units.push(0x22); break;
          case 0x5c: units.push(0x5c); break;
          case 0x2f: units.push(0x2f); break;
          case 0x62: units.push(0x08); break;
          case 0x66: units.push(0x0c); break;
          case 0x6e: units.push(0x0a); break;
          case 0x72: units.push(0x0d); break;
          case 0x74: units.push(0x09); break;
          case 0x75: {
            const r = this.u4(i + 2);
            i += 6;
            if (r >= 0xd800 && r <= 0xdfff) {
              if (r <= 0xdbff && i + 6 <= stop && a[i] === BSLASH && a[i + 1] === 0x75) {
                const r2 = this.u4(i + 2);
                if (r2 >= 0xdc00 && r2 <= 0xdfff) {
                  units.push(r, r2);
                  i += 6;
                  continue;
                }
              }
              units.push(0xfffd);
              this.substituted = true;
            } else {
              units.push(r);
            }
            continue;
          }
          default: throw new Error('unreachable: escape checked');
        }
        i += 2;
        continue;
      }
      if (b < 0x80) { units.push(b); i++; continue; }
      const n = utf8SequenceLength(a, i, stop);
      if (n === 0) { units.push(0xfffd); this.substituted = true; i++; continue; }
      let cp;
      if (n === 2) cp = ((b & 0x1f) << 6) | (a[i + 1] & 0x3f);
      else if (n === 3) cp = ((b & 0x0f) << 12) | ((a[i + 1] & 0x3f) << 6) | (a[i + 2] & 0x3f);
      else cp = ((b & 0x07) << 18) | ((a[i + 1] & 0x3f) << 12) | ((a[i + 2] & 0x3f) << 6) | (a[i + 3] & 0x3f);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        units.push(0xd800 | (cp >> 10), 0xdc00 | (cp & 0x3ff));
      } else {
        units.push(cp);
      }
      i += n;
    }
    flush();
    return parts.join('');
  }

  /** Skips one complete value (syntax checked, no recursion); returns its first byte's offset. */
  skipValue() {
    const kind = this.peekKind();
    const start = this.pos;
    switch (kind) {
      case '"': this.scanString(); break;
      case 'n': this.readNull(); break;
      case 't': case 'f': this.readBoolean(); break;
      case '0': this.scanNumber(); break;
      default: this.skipContainer();
    }
    return start;
  }

  /** A copy of the bytes of one complete value. */
  readRawValue() {
    const start = this.skipValue();
    return this.in.slice(start, this.pos);
  }

  skipContainer() {
    const base = this.depth;
    /** @type {boolean[]} true = object */
    const kinds = [];
    for (;;) {
      const c = this.peekKind();
      if (c === '{' || c === '[') {
        this.pos++;
        this.push();
        kinds.push(c === '{');
        const n = this.peek();
        if (c === '{') {
          if (n === 0x7d) {
            this.pos++;
          } else if (n === QUOTE) {
            this.scanString();
            if (this.peek() !== 0x3a) throw this.error('invalid character after object key');
            this.pos++;
            continue;
          } else {
            throw n < 0 ? this.error('unexpected end of JSON input') : this.error('invalid character looking for beginning of object key string');
          }
        } else if (n === 0x5d) {
          this.pos++;
        } else {
          continue;
        }
        this.depth--;
        kinds.pop();
      } else if (c === '"') {
        this.scanString();
      } else if (c === 'n') {
        this.readNull();
      } else if (c === 't' || c === 'f') {
        this.readBoolean();
      } else {
        this.scanNumber();
      }
      for (;;) {
        if (kinds.length === 0) {
          if (this.depth !== base) throw new Error('depth bookkeeping');
          return;
        }
        const isObject = kinds[kinds.length - 1];
        const n = this.peek();
        if (n === 0x2c) {
          this.pos++;
          if (isObject) {
            if (this.peek() !== QUOTE) throw this.error('invalid character looking for beginning of object key string');
            this.scanString();
            if (this.peek() !== 0x3a) throw this.error('invalid character after object key');
            this.pos++;
          }
          break;
        }
        if ((isObject && n === 0x7d) || (!isObject && n === 0x5d)) {
          this.pos++;
          this.depth--;
          kinds.pop();
          continue;
        }
        if (n < 0) throw this.error('unexpected end of JSON input');
        throw this.error(isObject ? 'invalid character after object key:value pair' : 'invalid character after array element');
      }
    }
  }
}


/** True when `b` is exactly one JSON value with no surrounding white space. @param {Uint8Array} b */
export function isOneValue(b) {
  if (b.length === 0) return false;
  try {
    const r = new GoJsonReader(b);
    if (r.skipValue() !== 0) return false;
    return r.atEnd();
  } catch (e) {
    if (e instanceof JsonSyntaxError) return false;
    throw e;
  }
}

/** True when `b` is one JSON value, white space around it allowed (Go's json.Valid). */
export function isValidJson(b) {
  try {
    const r = new GoJsonReader(b);
    r.skipValue();
    r.skipWhitespace();
    return r.atEnd();
  } catch (e) {
    if (e instanceof JsonSyntaxError) return false;
    throw e;
  }
}

// ---- writing ------------------------------------------------------------------------------

const HEX = '0123456789abcdef';

/** A growable byte buffer that writes JSON as Go's json.Marshal does (HTML escaping on). */
export class GoJsonWriter {
  constructor(capacity = 256) {
    this.buf = new Uint8Array(Math.max(16, capacity));
    this.len = 0;
  }

  ensure(extra) {
    if (this.len + extra > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
  }

  byte(b) {
    this.ensure(1);
    this.buf[this.len++] = b;
    return this;
  }

  /** ASCII text verbatim (member names, punctuation). */
  ascii(s) {
    this.ensure(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.len++] = s.charCodeAt(i);
    return this;
  }

  /** An unsigned integer (number or bigint) in plain decimal. */
  unsigned(v) {
    return this.ascii(BigInt(v).toString());
  }

  escapeU(c) {
    this.ensure(6);
    const b = this.buf;
    b[this.len++] = 0x5c;
    b[this.len++] = 0x75;
    b[this.len++] = HEX.charCodeAt((c >> 12) & 0xf);
    b[this.len++] = HEX.charCodeAt((c >> 8) & 0xf);
    b[this.len++] = HEX.charCodeAt((c >> 4) & 0xf);
    b[this.len++] = HEX.charCodeAt(c & 0xf);
  }

  /** A quoted, escaped JSON string; an unpaired surrogate is written as \ufffd (Go's invalid UTF-8). */
  string(s) {
    const n = s.length;
    this.ensure(n + 2);
    this.buf[this.len++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c < 0x20 || c === QUOTE || c === BSLASH || c === 0x3c || c === 0x3e || c === 0x26) {
          let e = 0;
          switch (c) {
            case 0x08: e = 0x62; break;
            case 0x0c: e = 0x66; break;
            case 0x0a: e = 0x6e; break;
            case 0x0d: e = 0x72; break;
            case 0x09: e = 0x74; break;
            case QUOTE: e = QUOTE; break;
            case BSLASH: e = BSLASH; break;
            default: e = 0;
          }
          if (e === 0) {
            this.escapeU(c);
          } else {
            this.ensure(2);
            this.buf[this.len++] = BSLASH;
            this.buf[this.len++] = e;
          }
        } else {
          this.ensure(1);
          this.buf[this.len++] = c;
        }
      } else if (c < 0x800) {
        this.ensure(2);
        this.buf[this.len++] = 0xc0 | (c >> 6);
        this.buf[this.len++] = 0x80 | (c & 0x3f);
      } else if (c === 0x2028 || c === 0x2029) {
        this.escapeU(c);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          i++;
          this.ensure(4);
          this.buf[this.len++] = 0xf0 | (cp >> 18);
          this.buf[this.len++] = 0x80 | ((cp >> 12) & 0x3f);
          this.buf[this.len++] = 0x80 | ((cp >> 6) & 0x3f);
          this.buf[this.len++] = 0x80 | (cp & 0x3f);
        } else {
          this.escapeU(0xfffd);
        }
      } else {
        this.ensure(3);
        this.buf[this.len++] = 0xe0 | (c >> 12);
        this.buf[this.len++] = 0x80 | ((c >> 6) & 0x3f);
        this.buf[this.len++] = 0x80 | (c & 0x3f);
      }
    }
    this.ensure(1);
    this.buf[this.len++] = QUOTE;
    return this;
  }

  /**
   * A raw JSON value compacted as Go's compact(dst, src, escape=true): white space outside strings
   * removed; <, >, &, U+2028 and U+2029 escaped; nothing else changed. `src` must be valid JSON.
   * @param {Uint8Array} src
   */
  compactRaw(src) {
    this.ensure(src.length);
    let inString = false;
    let escaped = false;
    for (let i = 0; i < src.length; i++) {
      const c = src[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else {
        if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
        if (c === QUOTE) inString = true;
      }
      if (c === 0x3c || c === 0x3e || c === 0x26) {
        this.escapeU(c);
      } else if (c === 0xe2 && i + 2 < src.length && src[i + 1] === 0x80 && (src[i + 2] & ~1) === 0xa8) {
        this.escapeU(src[i + 2] === 0xa8 ? 0x2028 : 0x2029);
        i += 2;
      } else {
        this.ensure(1);
        this.buf[this.len++] = c;
      }
    }
    return this;
  }

  /** @returns {Uint8Array} a copy of the output */
  toBytes() {
    return this.buf.slice(0, this.len);
  }
}

// ---- text predicates (wire-format.md section 0) ---------------------------------------------

/** Go's unicode.IsSpace. @param {number} cp */
export function isGoSpace(cp) {
  if (cp <= 0x20) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d);
  if (cp < 0x85) return false;
  return cp === 0x85 || cp === 0xa0 || cp === 0x1680 || (cp >= 0x2000 && cp <= 0x200a)
    || cp === 0x2028 || cp === 0x2029 || cp === 0x202f || cp === 0x205f || cp === 0x3000;
}

/** Go control (Cc). @param {number} cp */
export function isGoControl(cp) {
  return cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f);
}

/** Every surrogate is part of a high-low pair. @param {string} s */
export function isValidUnicode(s) {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
      else return false;
    }
  }
  return true;
}

/** Bytes of the UTF-8 encoding Go would write (an unpaired surrogate counts as U+FFFD). @param {string} s */
export function utf8Length(s) {
  const n = s.length;
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * The exact UTF-8 of valid Unicode text; throws for an unpaired surrogate (never replaced).
 * @param {string} s @returns {Uint8Array}
 */
export function utf8Exact(s) {
  if (!isValidUnicode(s)) throw new TypeError('text is not valid Unicode (unpaired surrogate)');
  return new TextEncoder().encode(s);
}

function firstCodePoint(s) {
  return s.codePointAt(0);
}

function lastCodePoint(s) {
  const n = s.length;
  const c = s.charCodeAt(n - 1);
  if (c >= 0xdc00 && c <= 0xdfff && n >= 2) {
    const h = s.charCodeAt(n - 2);
    if (h >= 0xd800 && h <= 0xdbff) return s.codePointAt(n - 2);
  }
  return c;
}

/** token(maxBytes): non-empty, no surrounding Go white space, at most maxBytes UTF-8 bytes. */
export function isToken(s, maxBytes) {
  if (typeof s !== 'string' || s.length === 0) return false;
  if (isGoSpace(firstCodePoint(s)) || isGoSpace(lastCodePoint(s))) return false;
  return s.length * 3 <= maxBytes || utf8Length(s) <= maxBytes;
}

/** Non-empty with no surrounding Go white space. */
export function isTrimmedNonEmpty(s) {
  return s.length > 0 && !isGoSpace(firstCodePoint(s)) && !isGoSpace(lastCodePoint(s));
}

export function containsGoControl(s) {
  for (let i = 0; i < s.length; i++) if (isGoControl(s.charCodeAt(i))) return true;
  return false;
}

export function containsGoSpace(s) {
  for (let i = 0; i < s.length; i++) if (isGoSpace(s.charCodeAt(i))) return true;
  return false;
}

/** Compares by UTF-8 bytes (Go's < on strings); an unpaired surrogate orders as U+FFFD. */
export function compareUtf8(a, b) {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i);
    const cb = b.codePointAt(j);
    if (ca !== cb) {
      const oa = ca >= 0xd800 && ca <= 0xdfff ? 0xfffd : ca;
      const ob = cb >= 0xd800 && cb <= 0xdfff ? 0xfffd : cb;
      return oa < ob ? -1 : oa > ob ? 1 : 0;
    }
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  const ra = i < a.length;
  const rb = j < b.length;
  return ra === rb ? 0 : ra ? 1 : -1;
}

/** Exactly `digits` lowercase hex digits. */
export function isLowerHex(s, digits) {
  return s.length === digits && /^[0-9a-f]*$/.test(s);
}

/**
 * Go's struct field lookup: exact name first, then bytes.EqualFold-equivalent (only ASCII
 * letters, U+017F and U+212A can fold onto lowercase ASCII names). Index or -1.
 * @param {string} key @param {readonly string[]} fields
 */
export function matchField(key, fields) {
  for (let i = 0; i < fields.length; i++) if (fields[i] === key) return i;
  for (let i = 0; i < fields.length; i++) if (foldEquals(key, fields[i])) return i;
  return -1;
}

function foldEquals(key, field) {
  let k = 0;
  let f = 0;
  while (k < key.length && f < field.length) {
    const c = key.codePointAt(k);
    k += c > 0xffff ? 2 : 1;
    let folded;
    if (c >= 0x61 && c <= 0x7a) folded = c - 32;
    else if (c === 0x017f) folded = 0x53;
    else if (c === 0x212a) folded = 0x4b;
    else folded = c;
    let fc = field.charCodeAt(f++);
    if (fc >= 0x61 && fc <= 0x7a) fc -= 32;
    if (folded !== fc) return false;
  }
  return k === key.length && f === field.length;
}
