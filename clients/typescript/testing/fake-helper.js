// A fake helper for the transport tests: a `net` server on a Unix socket in a fresh 0700
// endpoint directory (or on loopback TCP with a token file), that parses each request and hands
// it to a script, which may answer anything: well-formed, malformed, oversized, slow or nothing.
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './kit.js';
import { endpointProofMac, unixEndpoint, tcpEndpoint } from '../index.js';

export const TOKEN = 'c0ffee'.repeat(8);

/** An HTTP answer: status, headers, body (JSON bodies are serialized). */
export function answer(status, body = null, headers = {}) {
  const b = body === null ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  let h = `HTTP/1.1 ${status} X\r\nContent-Length: ${b.length}\r\n`;
  for (const [k, v] of Object.entries(headers)) h += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(h + '\r\n'), b]);
}

export function problem(status, code, detail, extra = {}, headers = {}) {
  return answer(status, { type: `urn:spice-authority:problem:${code}`, title: 'T', status, code, detail, ...extra },
    { 'Content-Type': 'application/problem+json', ...headers });
}

/**
 * @param {import('node:test').TestContext} t
 * @param {(req: {method: string, target: string, headers: Record<string,string>, body: Buffer, head: string}, sock: net.Socket) => void} script
 * @param {{tcp?: boolean, proof?: 'good'|'bad'|'silent'|'close'|'relayed', readBody?: boolean}} [o]
 */
export async function fakeHelper(t, script, o = {}) {
  const dir = tempDir(t);
  const endpointDir = path.join(dir, 'endpoint');
  fs.mkdirSync(endpointDir, { mode: 0o700 });
  const state = { requests: [], connections: 0, sockets: new Set() };
  const server = net.createServer((sock) => {
    state.connections++;
    state.sockets.add(sock);
    sock.on('close', () => state.sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let handled = false;
    sock.on('data', (d) => {
      if (handled && o.readBody === false) return;
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const [first, ...lines] = head.split('\r\n');
        const [method, target] = first.split(' ');
        const headers = {};
        for (const l of lines) {
          const c = l.indexOf(':');
          headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
        }
        const len = Number(headers['content-length'] ?? 0);
        if (o.readBody === false) {
          handled = true;
          state.requests.push({ method, target, headers, body: Buffer.alloc(0), head });
          script({ method, target, headers, body: Buffer.alloc(0), head }, sock);
          return;
        }
        if (buf.length < end + 4 + len) return;
        const body = buf.subarray(end + 4, end + 4 + len);
        buf = buf.subarray(end + 4 + len);
        const req = { method, target, headers, body, head };
        if (target.startsWith('/v1/endpoint-proof')) {
          proofAnswer(req, sock);
          continue;
        }
        state.requests.push(req);
        script(req, sock);
      }
    });
  });
  function proofAnswer(req, sock) {
    const nonce = Buffer.from(new URL(req.target, 'http://x').searchParams.get('nonce'), 'hex');
    const port = o.proof === 'relayed' ? sock.localPort + 1 : sock.localPort;
    const mac = endpointProofMac(Buffer.from(TOKEN), nonce, sock.localAddress, port).toString('hex');
    switch (o.proof ?? 'good') {
      case 'good': case 'relayed': sock.write(answer(200, { proof: mac })); break;
      case 'bad': sock.write(answer(200, { proof: 'ab'.repeat(32) })); break;
      case 'close': sock.write(answer(200, { proof: mac }, { Connection: 'close' })); break;
      case 'silent': break;
      default: throw new Error('proof mode');
    }
  }
  let endpoint;
  if (o.tcp) {
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const tokenFile = path.join(endpointDir, 'token');
    fs.writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
    endpoint = tcpEndpoint({ host: '127.0.0.1', port: server.address().port, tokenFile });
  } else {
    const sock = path.join(endpointDir, 'authority.sock');
    await new Promise((r) => server.listen(sock, r));
    endpoint = unixEndpoint(sock);
  }
  t.after(() => new Promise((r) => {
    for (const s of state.sockets) s.destroy();
    server.close(() => r());
  }));
  return { endpoint, state, dir, endpointDir, server };
}
