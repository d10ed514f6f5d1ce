// A deliberately small HTTP/1.1 transport for the helper's local API, on raw `net` sockets (not
// node:http: the peer check and the TCP endpoint proof must happen on the very connection the
// request then uses, before a byte of it is written). One request per connection
// (`Connection: close`); on TCP preceded, on the same connection, by the endpoint proof.
// A port of spice.authority.host.HttpTransport.
//
// Guarantees:
// - Unix socket: nothing is sent before the endpoint is proven to be this user's (see
//   checkUnixEndpoint: Node has no SO_PEERCRED, so the proof is the file system's).
// - TCP: loopback only; nothing but the proof request (a nonce, no secret) is sent before the
//   server on that same connection has proven it holds the token; only then does the request
//   carry `Authorization: Bearer <token>`. The token is read for every request and zeroed after.
// - HelperUnreachable, HelperUntrusted and HelperInterrupted mean nothing of the request was sent.
// - Every wait is bounded: connect by the connect timeout, every read and write by the read
//   timeout, the whole exchange by 12 read timeouts; an answer's head by 64 KiB and its body by
//   the call's bound, counted as it arrives (never sized by Content-Length alone).
// - SECURITY: no message of this module contains the token or any file content.

import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  HelperConnectionLost, HelperInterrupted, HelperProtocolError, HelperTimeout, HelperUnreachable, HelperUntrusted,
} from './errors.js';

export const MAX_HEAD_BYTES = 64 * 1024;
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
export const EXCHANGE_READ_TIMEOUTS = 12;
export const MAX_PROOF_BYTES = 1024;
export const MAX_TOKEN_BYTES = 4096;
export const PROOF_PATH = '/v1/endpoint-proof';
export const PROOF_DOMAIN = 'spice-authority endpoint proof v2';
export const NONCE_BYTES = 32;
const WRITE_PIECE = 64 * 1024;

// ---- endpoints ------------------------------------------------------------------------------

/**
 * The helper's Unix socket.
 * @param {string} socketPath
 */
export function unixEndpoint(socketPath) {
  if (typeof socketPath !== 'string' || socketPath === '') throw new TypeError('socket path must be a non-empty string');
  return Object.freeze({ kind: 'unix', socket: socketPath, display: `unix:${socketPath}` });
}

/**
 * Loopback TCP with the bearer token in `tokenFile`.
 * @param {{host: string, port: number, tokenFile: string}} o host: an IP literal of 127.0.0.0/8 or ::1
 */
export function tcpEndpoint(o) {
  const host = o.host;
  // SECURITY: the bearer token is only ever sent to this machine, and never through a name lookup.
  if (!isLoopbackLiteral(host)) throw new TypeError('only loopback IP literals (127.0.0.0/8, ::1) are allowed');
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new RangeError('port out of range');
  if (typeof o.tokenFile !== 'string' || o.tokenFile === '') throw new TypeError('token file must be a path');
  const shown = host.includes(':') ? `[${host}]` : host;
  return Object.freeze({ kind: 'tcp', host, port: o.port, tokenFile: o.tokenFile, display: `http://${shown}:${o.port}` });
}

function isLoopbackLiteral(host) {
  if (typeof host !== 'string') return false;
  if (net.isIPv4(host)) return host.split('.')[0] === '127';
  if (net.isIPv6(host)) return ipv6Bytes(host).equals(Buffer.from([...new Array(15).fill(0), 1]));
  return false;
}

/**
 * The one rule for the default endpoint directory, shared with serve and the Java client:
 * `$XDG_RUNTIME_DIR/spice-agent` when XDG_RUNTIME_DIR is absolute (not ending in '/'), else
 * `/tmp/spice-agent-<uid>` (`/private/tmp/…` on macOS).
 */
export function defaultEndpointDirectory(env = process.env, uid = process.getuid?.() ?? -1, platform = process.platform) {
  const x = env.XDG_RUNTIME_DIR;
  if (x && x.startsWith('/') && !x.endsWith('/')) return `${x}/spice-agent`;
  if (uid < 0) return null;
  return `${platform === 'darwin' ? '/private/tmp' : '/tmp'}/spice-agent-${uid}`;
}

/** This user's default socket endpoint. */
export function defaultEndpoint() {
  const dir = defaultEndpointDirectory();
  if (dir === null) throw new Error('cannot determine the user id for the default endpoint');
  return unixEndpoint(`${dir}/authority.sock`);
}

// ---- the Unix socket's owner ----------------------------------------------------------------

/**
 * SECURITY: proves, before anything is sent, that the socket at `socketPath` was put there by this
 * user (Node cannot read SO_PEERCRED):
 *  1. the socket's directory is resolved once (realpath), and the client connects to that
 *     resolved path, so no symbolic link is followed after the checks;
 *  2. every ancestor of that directory is owned by root or this user, and none is writable by
 *     group or others unless it is sticky (so no other user can rename or replace anything on
 *     the way down);
 *  3. the endpoint directory is this user's, mode exactly 0700 (so no other user can create,
 *     rename or remove an entry in it);
 *  4. the socket is a socket (not a link) owned by this user; after connecting it is still the
 *     same inode.
 * A socket in such a directory can only have been bound by a process of this user (or root), so
 * the listener is this user's. Residual risk, accepted and documented: root; a process of this
 * same user (the same trust domain the helper's own SO_PEERCRED check admits); a listening
 * descriptor this user deliberately passed to another user's process; file systems that report
 * owners they do not enforce. /proc/net/unix cannot name the peer of a connection (only paths and
 * inodes of sockets), so it would prove nothing more and is not used.
 * @returns {{path: string, dev: number, ino: number}} the path to connect to and the socket's identity
 */
export function checkUnixEndpoint(socketPath, display = `unix:${socketPath}`) {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') {
    throw new HelperUntrusted(`refused: ${display}: this platform cannot prove who serves a Unix socket; use TCP with the token`);
  }
  const uid = process.getuid();
  const abs = path.resolve(socketPath);
  const name = path.basename(abs);
  let dir;
  try {
    dir = fs.realpathSync(path.dirname(abs));
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') throw new HelperUnreachable(`no helper socket at ${socketPath}`);
    throw new HelperUntrusted(`refused: ${display}: its directory cannot be resolved (${e.code})`);
  }
  const parts = dir.split('/').filter(Boolean);
  let at = '/';
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) at = path.join(at, parts[i - 1]);
    const st = lstat(at, display);
    if (st === null) throw new HelperUnreachable(`no helper socket at ${socketPath}`);
    if (!st.isDirectory()) throw new HelperUntrusted(`refused: ${display}: ${at} is not a directory`);
    const last = i === parts.length;
    if (last) {
      if (st.uid !== uid || (st.mode & 0o777) !== 0o700) {
        throw new HelperUntrusted(`refused: ${display}: its directory ${at} must be yours with mode 0700 (it is owned by uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)})`);
      }
    } else if ((st.uid !== 0 && st.uid !== uid) || ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0)) {
      throw new HelperUntrusted(`refused: ${display}: the ancestor ${at} is owned by another user or writable by others without the sticky bit`);
    }
  }
  const sock = path.join(dir, name);
  const st = lstat(sock, display);
  if (st === null) throw new HelperUnreachable(`no helper socket at ${socketPath}`);
  if (!st.isSocket()) throw new HelperUntrusted(`refused: ${display} is not a socket`);
  if (st.uid !== uid) throw new HelperUntrusted(`refused: ${display} is another user's socket (uid ${st.uid})`);
  return { path: sock, dev: st.dev, ino: st.ino };
}

function lstat(p, display) {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
    throw new HelperUntrusted(`refused: ${display}: ${p} cannot be examined (${e.code})`);
  }
}

// ---- the token file -------------------------------------------------------------------------

/**
 * Reads the helper's bearer token as the Java client does (TokenFiles): a regular single-link
 * file of this user, mode 0600, in a 0700 directory of this user, never through a symbolic link;
 * the token is the content without surrounding white space, visible ASCII only. The caller
 * zeroes the returned buffer.
 * @returns {Buffer}
 */
export function readTokenFile(file) {
  if (typeof process.getuid !== 'function') {
    // SECURITY: on Windows the owner and DACL of the file cannot be read from Node: refused unread.
    throw new Error(`token file ${file}: refused: this platform cannot prove the file is yours alone`);
  }
  const abs = path.resolve(file);
  const uid = process.getuid();
  let dir;
  let before;
  try {
    dir = fs.lstatSync(path.dirname(abs));
    before = fs.lstatSync(abs);
  } catch (e) {
    if (e.code === 'ENOENT') throw new HelperUnreachable(`no token file ${file}`);
    throw new Error(`token file ${file}: cannot be examined (${e.code})`);
  }
  // SECURITY: another user's directory or file, a link, or loose rights: refused unread.
  if (!dir.isDirectory() || dir.uid !== uid || (dir.mode & 0o777) !== 0o700) {
    throw new Error(`token file ${file}: refused: its directory must be yours with mode 0700`);
  }
  if (!before.isFile() || before.uid !== uid || (before.mode & 0o777) !== 0o600 || before.nlink !== 1) {
    throw new Error(`token file ${file}: refused: must be your regular single-link file with mode 0600`);
  }
  if (before.size > MAX_TOKEN_BYTES) throw new Error(`token file ${file}: refused: larger than ${MAX_TOKEN_BYTES} bytes`);
  const buf = Buffer.alloc(before.size + 1);
  let fd = -1;
  try {
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    // RACE: the file could be replaced between the checks and the open; the same device and inode
    // on the open descriptor prove the bytes come from the file that was checked.
    const st = fs.fstatSync(fd);
    if (st.dev !== before.dev || st.ino !== before.ino || !st.isFile()) throw new Error(`token file ${file}: refused: it changed while being read`);
    let n = 0;
    for (;;) {
      const k = fs.readSync(fd, buf, n, buf.length - n, null);
      if (k === 0) break;
      n += k;
      if (n === buf.length) throw new Error(`token file ${file}: refused: it changed while being read`);
    }
    if (n !== before.size) throw new Error(`token file ${file}: refused: it changed while being read`);
    return tokenOf(file, buf.subarray(0, n));
  } catch (e) {
    if (e.code) throw new Error(`token file ${file}: cannot be read (${e.code})`);
    throw e;
  } finally {
    if (fd >= 0) fs.closeSync(fd);
    buf.fill(0);
  }
}

function tokenOf(file, content) {
  const space = (b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;
  let from = 0;
  let to = content.length;
  while (from < to && space(content[from])) from++;
  while (to > from && space(content[to - 1])) to--;
  if (from === to) throw new Error(`token file ${file}: empty`);
  for (let i = from; i < to; i++) {
    if (content[i] <= 0x20 || content[i] >= 0x7f) throw new Error(`token file ${file}: not a token (only visible ASCII characters are allowed)`);
  }
  return Buffer.from(content.subarray(from, to)); // a copy: the caller zeroes it
}

// ---- the endpoint proof ---------------------------------------------------------------------

/** The bytes of an IPv6 literal. */
function ipv6Bytes(s) {
  let head = s;
  let v4 = null;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    v4 = s.slice(lastColon + 1).split('.').map(Number);
    head = s.slice(0, lastColon + 1) + '0:0';
  }
  const [l, r] = head.includes('::') ? head.split('::') : [head, null];
  const left = l ? l.split(':') : [];
  const right = r ? r.split(':') : [];
  const groups = r === null ? left : [...left, ...new Array(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  if (v4) Buffer.from(v4).copy(out, 12);
  return out;
}

/**
 * The server's address as the proof names it: 4 bytes for IPv4 (also IPv4-mapped IPv6, a
 * dual-stack listener), else 16.
 * @param {string} address an IP literal
 */
export function addressBytes(address) {
  if (net.isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (net.isIPv6(address)) {
    const b = ipv6Bytes(address);
    if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return b.subarray(12);
    return b;
  }
  throw new TypeError('not an IP literal');
}

/**
 * HMAC-SHA256(token, DOMAIN || 0x00 || nonce || n || address || port), n = 4 or 16 (one byte),
 * the port as two bytes big-endian.
 * @param {Uint8Array} token @param {Uint8Array} nonce 32 bytes @param {string} address @param {number} port
 */
export function endpointProofMac(token, nonce, address, port) {
  if (token.length === 0) throw new TypeError('empty token');
  if (nonce.length !== NONCE_BYTES) throw new TypeError(`nonce must be ${NONCE_BYTES} bytes`);
  if (!Number.isInteger(port) || port < 0 || port > 0xffff) throw new RangeError('port out of range');
  const a = addressBytes(address);
  const p = Buffer.alloc(2);
  p.writeUInt16BE(port);
  return createHmac('sha256', token).update(PROOF_DOMAIN, 'ascii').update(Buffer.from([0])).update(nonce)
    .update(Buffer.from([a.length])).update(a).update(p).digest();
}

/**
 * Checks the proof answer's body; returns nothing, throws an Error whose message leaks nothing of
 * the token, the nonce or the proof.
 */
export function verifyEndpointProof(token, nonce, address, port, body) {
  let proof;
  try {
    const o = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new Error('x');
    proof = o.proof;
  } catch {
    throw new Error('its answer is not a JSON object');
  }
  if (typeof proof !== 'string') throw new Error('its answer has no proof');
  if (!/^[0-9a-f]{64}$/.test(proof)) throw new Error('its proof is not 64 lowercase hex digits');
  const expected = endpointProofMac(token, nonce, address, port);
  // SECURITY: constant time, so the comparison tells nothing about how much of the MAC matched.
  if (!timingSafeEqual(expected, Buffer.from(proof, 'hex'))) throw new Error('its proof is wrong');
}

// ---- the connection -------------------------------------------------------------------------

class Timeout extends Error {}

/** A socket with queued input, every wait bounded. */
class Conn {
  constructor(socket, limit) {
    this.socket = socket;
    /** @type {Buffer[]} */
    this.queue = [];
    this.queued = 0;
    this.eof = false;
    this.error = null;
    this.wake = null;
    this.deadline = Infinity;
    socket.on('data', (chunk) => {
      this.queue.push(chunk);
      this.queued += chunk.length;
      // SECURITY: a server that floods while nobody reads is cut off, not buffered without end.
      if (this.queued > limit) {
        this.error = new HelperProtocolError('the helper sent more than this call accepts');
        socket.destroy();
      }
      this.poke();
    });
    socket.on('end', () => { this.eof = true; this.poke(); });
    socket.on('error', (e) => { this.error ??= e; this.poke(); });
    socket.on('close', () => { this.eof = true; this.poke(); });
  }

  poke() {
    const w = this.wake;
    this.wake = null;
    if (w) w();
  }

  /** Waits for more input: true when some arrived, false at the end of the connection. */
  async fill(readTimeoutMs) {
    if (this.error instanceof HelperProtocolError) throw this.error;
    if (this.eof || this.error) return false;
    const wait = Math.min(readTimeoutMs, this.deadline - Date.now());
    if (wait <= 0) throw new Timeout();
    const before = this.queued;
    await new Promise((resolve) => {
      const t = setTimeout(resolve, wait);
      this.wake = () => { clearTimeout(t); resolve(); };
    });
    if (this.error instanceof HelperProtocolError) throw this.error;
    if (this.queued > before) return true;
    if (this.eof || this.error) return false;
    throw new Timeout();
  }

  /** Removes and returns the first `n` queued bytes (all queued), copying only what they span. */
  take(n) {
    const pieces = [];
    let got = 0;
    while (got < n) {
      const c = this.queue[0];
      const k = Math.min(c.length, n - got);
      pieces.push(c.subarray(0, k));
      if (k === c.length) this.queue.shift();
      else this.queue[0] = c.subarray(k);
      got += k;
    }
    this.queued -= n;
    return pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, n);
  }

  /**
   * One line without CRLF (a bare LF tolerated), at most `max` bytes, as latin1. Scans each queued
   * chunk once: a helper sending many tiny chunked pieces costs linear time, never quadratic.
   */
  async line(max, readTimeoutMs, firstOfResponse) {
    const ready = this.queue.length > 0 ? this.lineNow(max) : null;
    if (ready !== null) return ready;
    return this.lineWait(max, readTimeoutMs, firstOfResponse);
  }

  /** A line from the first queued chunk when it holds one (the common case), else null; no await. */
  lineNow(max) {
    const c = this.queue[0];
    const nl = c.indexOf(0x0a);
    if (nl < 0 || nl > max) return null;
    this.queued -= nl + 1;
    if (nl + 1 === c.length) this.queue.shift();
    else this.queue[0] = c.subarray(nl + 1);
    const end = nl > 0 && c[nl - 1] === 0x0d ? nl - 1 : nl;
    return c.toString('latin1', 0, end);
  }

  async lineWait(max, readTimeoutMs, firstOfResponse) {
    const tooLarge = () => new HelperProtocolError(`response head from the helper is larger than ${MAX_HEAD_BYTES} bytes`);
    let scanned = 0;
    let qi = 0;
    for (;;) {
      for (; qi < this.queue.length; qi++) {
        const c = this.queue[qi];
        const nl = c.indexOf(0x0a);
        if (nl >= 0) {
          if (scanned + nl > max) throw tooLarge();
          const line = this.take(scanned + nl + 1);
          const len = scanned + nl;
          const end = len > 0 && line[len - 1] === 0x0d ? len - 1 : len;
          return line.subarray(0, end).toString('latin1');
        }
        scanned += c.length;
        if (scanned > max) throw tooLarge();
      }
      if (!(await this.fill(readTimeoutMs))) {
        throw new HelperProtocolError(firstOfResponse && this.queued === 0
          ? 'the helper closed the connection without a response' : 'the helper closed the connection mid-response');
      }
    }
  }

  exactly(n, readTimeoutMs) {
    if (this.queued >= n) return n === 0 ? Buffer.alloc(0) : this.take(n); // no await when it is there
    return this.exactlyWait(n, readTimeoutMs);
  }

  async exactlyWait(n, readTimeoutMs) {
    while (this.queued < n) {
      if (!(await this.fill(readTimeoutMs))) throw new HelperProtocolError('the helper closed the connection mid-response');
    }
    return n === 0 ? Buffer.alloc(0) : this.take(n);
  }

  async toEof(max, readTimeoutMs) {
    const pieces = [];
    let got = 0;
    for (;;) {
      while (this.queue.length) {
        const c = this.queue.shift();
        this.queued -= c.length;
        got += c.length;
        if (got > max) throw new HelperProtocolError(`response body from the helper is larger than ${max} bytes`);
        pieces.push(c);
      }
      if (!(await this.fill(readTimeoutMs))) return Buffer.concat(pieces, got);
    }
  }

  /** Writes all of `buf` in pieces, each within the read timeout, all by the deadline. */
  async write(buf, readTimeoutMs) {
    for (let off = 0; off < buf.length; off += WRITE_PIECE) {
      const piece = buf.subarray(off, Math.min(buf.length, off + WRITE_PIECE));
      const wait = Math.min(readTimeoutMs, this.deadline - Date.now());
      if (wait <= 0) throw new Timeout();
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Timeout()), wait);
        this.socket.write(piece, (err) => {
          clearTimeout(t);
          if (err) reject(err);
          else resolve();
        });
      });
      if (this.error) throw this.error;
    }
  }
}

/**
 * Reads one response.
 * @param {boolean} framed the body must be framed by Content-Length or chunked (the connection
 *   stays open after it), never by the end of the connection
 */
async function readResponse(conn, method, maxBody, framed, readTimeoutMs) {
  let headBytes = 0;
  for (;;) {
    const statusLine = await conn.line(MAX_HEAD_BYTES - headBytes, readTimeoutMs, true);
    headBytes += statusLine.length + 2;
    const m = /^HTTP\/1\.\d ([0-9]{3})(?: (.*))?$/.exec(statusLine);
    if (!m) throw new HelperProtocolError('malformed status line from the helper');
    const status = Number(m[1]);
    const reason = m[2] ?? '';
    /** @type {Map<string, string>} */
    const headers = new Map();
    for (;;) {
      const h = await conn.line(MAX_HEAD_BYTES - headBytes, readTimeoutMs, false);
      headBytes += h.length + 2;
      if (h === '') break;
      const colon = h.indexOf(':');
      if (colon <= 0 || h[0] === ' ' || h[0] === '\t') throw new HelperProtocolError('malformed header line from the helper');
      const name = h.slice(0, colon).trim().toLowerCase();
      const value = h.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    if (status >= 100 && status < 200) {
      if (status === 101) throw new HelperProtocolError('unexpected protocol switch from the helper');
      continue; // interim; the final answer follows
    }
    const body = await readBody(conn, method, status, headers, maxBody, framed, readTimeoutMs);
    return { status, reason, headers, body };
  }
}

async function readBody(conn, method, status, headers, maxBody, framed, readTimeoutMs) {
  if (method === 'HEAD' || status === 204 || status === 304) return Buffer.alloc(0);
  const te = headers.get('transfer-encoding');
  if (te !== undefined) {
    if (te.slice(te.lastIndexOf(',') + 1).trim().toLowerCase() !== 'chunked') {
      throw new HelperProtocolError('unsupported transfer encoding from the helper');
    }
    // One buffer grown by doubling as chunks arrive (never sized by what the helper announces).
    let out = Buffer.alloc(Math.min(maxBody, 64 * 1024));
    let got = 0;
    for (;;) {
      const sizeLine = (conn.queue.length > 0 ? conn.lineNow(1024) : null) ?? await conn.line(1024, readTimeoutMs, false);
      const hex = sizeLine.split(';')[0].trim();
      if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) throw new HelperProtocolError('malformed chunk size from the helper');
      const size = parseInt(hex, 16);
      if (size === 0) break;
      if (got + size > maxBody) throw new HelperProtocolError(`response body from the helper is larger than ${maxBody} bytes`);
      const piece = conn.queued >= size ? conn.take(size) : await conn.exactly(size, readTimeoutMs);
      if (got + size > out.length) {
        const grown = Buffer.alloc(Math.min(maxBody, Math.max(out.length * 2, got + size)));
        out.copy(grown, 0, 0, got);
        out = grown;
      }
      piece.copy(out, got);
      got += size;
      const crlf = (conn.queue.length > 0 ? conn.lineNow(2) : null) ?? await conn.line(2, readTimeoutMs, false);
      if (crlf !== '') throw new HelperProtocolError('malformed chunk from the helper');
    }
    let trailer = 0;
    for (;;) {
      const t = await conn.line(MAX_HEAD_BYTES - trailer, readTimeoutMs, false);
      trailer += t.length + 2;
      if (t === '') return out.subarray(0, got);
    }
  }
  const cl = headers.get('content-length');
  if (cl !== undefined) {
    const values = cl.split(',').map((v) => v.trim());
    if (values.some((v) => v !== values[0])) throw new HelperProtocolError('conflicting Content-Length from the helper');
    if (!/^[0-9]{1,10}$/.test(values[0]) || Number(values[0]) > maxBody) {
      throw new HelperProtocolError(`response body from the helper is larger than ${maxBody} bytes or has a malformed Content-Length`);
    }
    return conn.exactly(Number(values[0]), readTimeoutMs);
  }
  if (framed) throw new HelperProtocolError('response from the helper has neither Content-Length nor chunked framing');
  return conn.toEof(maxBody, readTimeoutMs);
}

// ---- the transport --------------------------------------------------------------------------

const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function requireHeaderText(s, what) {
  // SECURITY: no CR/LF or other controls: a header or target can never split the request.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || (what === 'request target' && (c === 0x20 || c > 0x7e))) {
      throw new TypeError(`${what} has a control or non-ASCII character`);
    }
  }
}

/** Percent-encodes one path segment (RFC 3986 unreserved characters stay). */
export function segment(s) {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export class HttpTransport {
  /**
   * @param {object} endpoint from unixEndpoint/tcpEndpoint
   * @param {{connectTimeoutMs?: number, readTimeoutMs?: number, userAgent?: string}} [o]
   */
  constructor(endpoint, o = {}) {
    this.endpoint = endpoint;
    this.connectTimeoutMs = Math.max(1, o.connectTimeoutMs ?? 10000);
    this.readTimeoutMs = Math.max(1, o.readTimeoutMs ?? 10000);
    this.userAgent = o.userAgent ?? 'spice-authority-host-node';
  }

  /**
   * Sends one request and reads the whole answer.
   * @param {{method: string, target: string, headers?: Record<string,string>, body?: Uint8Array|null, maxBody?: number, signal?: AbortSignal}} r
   * @returns {Promise<{status: number, reason: string, headers: Map<string,string>, body: Buffer}>}
   */
  async send(r) {
    const ep = this.endpoint;
    if (!TCHAR.test(r.method)) throw new TypeError('method is not an HTTP token');
    requireHeaderText(r.target, 'request target');
    if (!r.target.startsWith('/')) throw new TypeError("request target must start with '/'");
    const maxBody = r.maxBody ?? MAX_BODY_BYTES;
    const body = r.body ?? null;
    const aborted = () => r.signal?.aborted === true;
    if (aborted()) throw new HelperInterrupted(`aborted before anything was sent to ${ep.display}`);
    let token = null;
    let unixTarget = null;
    if (ep.kind === 'tcp') {
      try {
        token = readTokenFile(ep.tokenFile);
      } catch (e) {
        if (e instanceof HelperUnreachable) throw e;
        // Nothing was sent, which a caller must be able to tell from a lost answer.
        throw new HelperUntrusted(`the token for ${ep.display} cannot be used (${e.message}); nothing was sent`);
      }
    } else {
      unixTarget = checkUnixEndpoint(ep.socket, ep.display);
    }
    let head = null;
    let conn = null;
    let sending = false;
    try {
      head = this.head(r.method, r.target, r.headers ?? {}, body, token);
      conn = await this.connect(unixTarget, maxBody);
      if (ep.kind === 'unix') {
        // RACE: the socket could have been replaced between the check and the connect, but only
        // by this user or root (the directory is this user's, 0700); the same inode afterwards
        // shows the checked socket is still in place.
        const again = lstat(unixTarget.path, ep.display);
        if (again === null || again.dev !== unixTarget.dev || again.ino !== unixTarget.ino) {
          throw new HelperUntrusted(`refused: ${ep.display} changed while connecting; nothing was sent`);
        }
      } else {
        // SECURITY: on TCP anyone may hold the port; the token and the body go only on a
        // connection whose server has just proven it holds the token.
        await this.requireTokenHolder(conn, token);
      }
      // The last point where nothing of the request was sent.
      if (aborted()) throw new HelperInterrupted(`aborted before the request was sent to ${ep.display}; nothing was sent`);
      sending = true;
      const onAbort = () => conn.socket.destroy(new Error('aborted by the caller'));
      r.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        conn.deadline = Date.now() + EXCHANGE_READ_TIMEOUTS * this.readTimeoutMs;
        try {
          await conn.write(head, this.readTimeoutMs);
          head.fill(0);
          if (body && body.length > 0) await conn.write(Buffer.from(body.buffer, body.byteOffset, body.length), this.readTimeoutMs);
        } catch (writeFailed) {
          if (writeFailed instanceof Timeout) throw new HelperTimeout(`timed out sending to the helper at ${ep.display}; the outcome is unknown`);
          // The helper may have answered before it read the whole body (a body over its budget or
          // limit: 503 or 413, then the connection closed). Its answer, if one came whole, is the
          // outcome: it refused before any resource ran. Otherwise the outcome is unknown.
          const early = await this.earlyAnswer(conn, r.method);
          if (early) return early;
          throw new HelperConnectionLost(`the connection to ${ep.display} failed while sending (${writeFailed.code ?? writeFailed.message}); the outcome is unknown`);
        }
        try {
          return await readResponse(conn, r.method, maxBody, false, this.readTimeoutMs);
        } catch (e) {
          if (e instanceof Timeout) throw new HelperTimeout(`timed out waiting for the helper at ${ep.display}; the outcome is unknown`);
          if (aborted()) throw new HelperConnectionLost(`aborted after the request was sent to ${ep.display}; the outcome is unknown`);
          throw e;
        }
      } finally {
        r.signal?.removeEventListener('abort', onAbort);
      }
    } catch (e) {
      if (sending || e instanceof HelperUnreachable || e instanceof HelperUntrusted || e instanceof HelperInterrupted) throw e;
      if (e instanceof TypeError) throw e;
      // Before the request's first byte, whatever failed sent nothing of the request.
      throw new HelperUnreachable(`cannot talk to ${ep.display} (${e.code ?? e.message}); nothing was sent`);
    } finally {
      token?.fill(0);
      head?.fill(0); // SECURITY: the head holds the bearer token on TCP
      conn?.socket.destroy();
    }
  }

  /** An error answer the helper sent before the request was written whole, or null. */
  async earlyAnswer(conn, method) {
    try {
      conn.deadline = Math.min(conn.deadline, Date.now() + this.readTimeoutMs);
      const r = await readResponse(conn, method, MAX_PROOF_BYTES * 64, false, this.readTimeoutMs);
      return r.status >= 400 ? r : null;
    } catch {
      return null;
    }
  }

  head(method, target, headers, body, token) {
    let h = `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nUser-Agent: ${this.userAgent}\r\n`;
    let accept = false;
    let contentType = false;
    for (const [k, v] of Object.entries(headers)) {
      if (!TCHAR.test(k)) throw new TypeError('header name is not an HTTP token');
      requireHeaderText(v, `header ${k}`);
      const lower = k.toLowerCase();
      if (['host', 'connection', 'content-length', 'authorization', 'transfer-encoding'].includes(lower)) {
        throw new TypeError(`header ${k} is set by the client itself`);
      }
      accept ||= lower === 'accept';
      contentType ||= lower === 'content-type';
      h += `${k}: ${v}\r\n`;
    }
    if (!accept) h += 'Accept: application/json, application/problem+json\r\n';
    if (body !== null && !contentType) h += 'Content-Type: application/json\r\n';
    if (body !== null || method === 'POST' || method === 'PUT') h += `Content-Length: ${body === null ? 0 : body.length}\r\n`;
    const start = Buffer.from(h, 'utf8');
    if (token === null) return Buffer.concat([start, Buffer.from('\r\n')]);
    return Buffer.concat([start, Buffer.from('Authorization: Bearer ', 'ascii'), token, Buffer.from('\r\n\r\n')]);
  }

  /** Connects within the connect timeout; every failure is HelperUnreachable (nothing sent). */
  connect(unixTarget, maxBody) {
    const ep = this.endpoint;
    return new Promise((resolve, reject) => {
      const socket = ep.kind === 'unix' ? net.createConnection({ path: unixTarget.path }) : net.createConnection({ host: ep.host, port: ep.port });
      const t = setTimeout(() => {
        socket.destroy();
        reject(new HelperUnreachable(`no connection to ${ep.display} within ${this.connectTimeoutMs} ms; nothing was sent`));
      }, this.connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(t);
        socket.removeAllListeners('error');
        resolve(new Conn(socket, MAX_HEAD_BYTES + maxBody + 64 * 1024));
      });
      socket.once('error', (e) => {
        clearTimeout(t);
        socket.destroy();
        const what = e.code === 'ECONNREFUSED' || e.code === 'ENOENT' ? `nothing is listening on ${ep.display}` : `cannot connect to ${ep.display}`;
        reject(new HelperUnreachable(`${what} (${e.code ?? e.message}); nothing was sent`));
      });
    });
  }

  /**
   * The TCP endpoint proof on the connection the request will use; anything but the expected
   * proof is HelperUntrusted, and nothing more is sent.
   */
  async requireTokenHolder(conn, token) {
    const ep = this.endpoint;
    const nonce = randomBytes(NONCE_BYTES);
    let reason;
    try {
      const ask = `GET ${PROOF_PATH}?nonce=${nonce.toString('hex')} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ${this.userAgent}\r\nAccept: application/json\r\n\r\n`;
      // SECURITY: the whole answer within one read timeout, not each read: a squatter that drips
      // a byte now and then would otherwise hold the client for as long as it likes.
      conn.deadline = Date.now() + this.readTimeoutMs;
      await conn.write(Buffer.from(ask, 'ascii'), this.readTimeoutMs);
      const res = await readResponse(conn, 'GET', MAX_PROOF_BYTES, true, this.readTimeoutMs);
      conn.deadline = Infinity;
      const connection = res.headers.get('connection');
      if (res.status !== 200) {
        reason = `it answered HTTP ${res.status} to the endpoint proof`;
      } else if (connection !== undefined && connection.toLowerCase().includes('close')) {
        reason = 'it would close the connection after the endpoint proof';
      } else {
        const server = conn.socket.remoteAddress;
        const port = conn.socket.remotePort;
        if (!server || !port) {
          reason = "the connection's server address is unknown";
        } else {
          // SECURITY: the proof must name the endpoint this connection reached, so one relayed
          // from a helper listening elsewhere is refused.
          verifyEndpointProof(token, nonce, server, port, res.body);
          return;
        }
      }
    } catch (e) {
      if (e instanceof Timeout) reason = `no answer to the endpoint proof within ${this.readTimeoutMs} ms`;
      else if (e instanceof HelperProtocolError) reason = e.message;
      else reason = e.code ? `the connection failed during the endpoint proof (${e.code})` : e.message;
    }
    throw new HelperUntrusted(`refused: the server at ${ep.display} did not prove it holds the helper's token (${reason}); `
      + 'nothing was sent to it, neither the token nor the request. Another process may hold the port, or the helper is older than this client.');
  }
}
