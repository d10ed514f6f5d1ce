// The client against a fake helper: typed refusals, retries only where nothing happened, bounded
// and deadlined answers, the Unix socket's owner check and the TCP endpoint proof.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { inspect } from 'node:util';
import { fakeHelper, answer, problem, TOKEN } from '../testing/fake-helper.js';
import { tempDir } from '../testing/kit.js';
import {
  AuthorityClient, RetryPolicy, HelperProblem, InvalidRequest, InvalidSnapshot, VerificationFailed, UnsupportedFormat, Busy, StateConflict,
  Uncertain, Unavailable, Cancelled, Closing, NotFound, Unauthorized, Unrecognized, HelperUnreachable, HelperUntrusted,
  HelperTimeout, HelperProtocolError, HelperInterrupted, unixEndpoint, outcomeUnknown,
} from '../index.js';

const FAST = { maxAttempts: 4, initialBackoffMs: 1, maxBackoffMs: 5 };
const client = (f, o = {}) => new AuthorityClient(f.endpoint, { retry: FAST, connectTimeoutMs: 1000, readTimeoutMs: 1000, ...o });
const RUN = JSON.stringify({ run_id: 'run-1', phase: 'ACTIVE', run_generation: 18446744073709551614n.toString(), owned: true })
  .replace('"18446744073709551614"', '18446744073709551614');

/** A fake helper that opens a session with id SECRET-SESSION and then runs `rest`. */
async function withSession(t, rest, o) {
  const f = await fakeHelper(t, (req, sock) => {
    if (req.target === '/v1/sessions') sock.end(answer(200, { session: 'SECRETSESSION0123', pid: process.pid }));
    else rest(req, sock);
  }, o);
  const c = client(f, o?.client);
  const s = await c.openSession();
  return { f, c, s };
}

test('run views: unsigned 64-bit generations arrive as BigInt, exactly', async (t) => {
  const { c, s } = await withSession(t, (req, sock) => sock.end(answer(200, RUN)));
  const v = await c.start(s, 'run-1');
  assert.equal(v.runGeneration, 18446744073709551614n);
  assert.equal(v.phase, 'ACTIVE');
});

test('problems: one class per code, named as Java names them; the session id never reaches a message', async (t) => {
  const cases = [
    ['invalid_request', 400, InvalidRequest], ['invalid_snapshot', 400, InvalidSnapshot], ['verification_failed', 403, VerificationFailed], ['unsupported_format', 415, UnsupportedFormat],
    ['busy', 409, Busy], ['state_conflict', 409, StateConflict], ['uncertain', 500, Uncertain], ['unavailable', 503, Unavailable],
    ['cancelled', 503, Cancelled], ['closing', 503, Closing], ['not_found', 404, NotFound], ['unauthorized', 401, Unauthorized],
    ['brand_new', 418, Unrecognized],
  ];
  let i = 0;
  const { c, s, f } = await withSession(t, (req, sock) => {
    const [code, status] = cases[i];
    sock.end(problem(status, code, `session SECRETSESSION0123 said ${code}`, code === 'invalid_snapshot' ? { rule: 'P-CALL-DUP' } : {}));
  }, { client: { retry: RetryPolicy.NONE } });
  for (i = 0; i < cases.length; i++) {
    const [code, status, C] = cases[i];
    await assert.rejects(c.release(s, 'run-1'), (e) => {
      assert.ok(e instanceof C && e instanceof HelperProblem, code);
      assert.equal(e.name, C.name);
      assert.equal(HelperProblem[C.name], C);
      assert.equal(e.status, status);
      assert.equal(e.code, code);
      assert.ok(!e.message.includes('SECRETSESSION0123') && e.message.includes('<session>'), e.message);
      if (C === InvalidSnapshot) assert.equal(e.rule, 'P-CALL-DUP');
      return true;
    });
  }
  assert.equal(f.state.requests.length, cases.length + 1);
  assert.equal(String(s), `Session[pid=${process.pid}]`);
  assert.ok(!inspect(s).includes('SECRET') && !JSON.stringify(s).includes('SECRET') && !inspect(c).includes('SECRET'));
});

test('retries: unavailable is repeated until it succeeds; the count is bounded', async (t) => {
  let n = 0;
  const { c, f } = await withSession(t, (req, sock) => {
    n++;
    sock.end(n < 3 ? problem(503, 'unavailable', 'retry') : answer(200, RUN));
  });
  const s2 = await c.openSession();
  assert.equal((await c.resume(s2, 'run-1')).runId, 'run-1');
  assert.equal(n, 3);
  n = -100;
  await assert.rejects(c.resume(s2, 'run-1'), Unavailable);
  assert.equal(f.state.requests.filter((r) => r.target.endsWith('/resume')).length, 3 + 4);
});

test('retries: never uncertain, never a busy without Retry-After, never a cancelled sign; a busy with Retry-After or a quota is repeated', async (t) => {
  let reply;
  let count = 0;
  const { c, s } = await withSession(t, (req, sock) => { count++; sock.end(reply()); });
  const once = async (r, call, C) => {
    count = 0;
    reply = r;
    await assert.rejects(call(), C);
    return count;
  };
  assert.equal(await once(() => problem(500, 'uncertain', 'unknown'), () => c.release(s, 'run-1'), Uncertain), 1);
  assert.equal(await once(() => problem(409, 'busy', 'owned'), () => c.release(s, 'run-1'), Busy), 1);
  assert.equal(await once(() => problem(503, 'cancelled', 'late'), () => c.sign(s, 'run-1', Buffer.from('{}')), Cancelled), 1);
  assert.equal(await once(() => problem(503, 'cancelled', 'early'), () => c.release(s, 'run-1'), Cancelled), 4);
  assert.equal(await once(() => problem(429, 'busy', 'quota'), () => c.release(s, 'run-1'), Busy), 4);
  assert.equal(await once(() => problem(409, 'busy', 'later', {}, { 'Retry-After': '0' }), () => c.release(s, 'run-1'), Busy), 4);
  assert.equal(await once(() => 'HTTP/1.1 200 OK\r\nbroken header\r\n\r\n', () => c.release(s, 'run-1'), HelperProtocolError), 1);
  assert.equal(await once(() => answer(500, 'not a problem'), () => c.release(s, 'run-1'), HelperProtocolError), 1);
  // a cancelled sign may follow the write: its outcome is unknown, as is uncertain's
  reply = () => problem(503, 'cancelled', 'late');
  await assert.rejects(c.sign(s, 'run-1', Buffer.from('{}')), (e) => e.mayFollowWrite === true && outcomeUnknown(e));
});

test('unreachable: no socket, or a socket nobody listens on, is HelperUnreachable (nothing sent) and retried', async (t) => {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'e'), { mode: 0o700 });
  const c = new AuthorityClient(unixEndpoint(path.join(dir, 'e', 'authority.sock')), { retry: FAST });
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUnreachable && e.nothingSent && !outcomeUnknown(e));
  // a stale socket file: bound, then the listener closed
  const stale = net.createServer();
  const p = path.join(dir, 'e', 'stale.sock');
  await new Promise((r) => stale.listen(p, r));
  stale.close();
  await new Promise((r) => stale.once('close', r));
  if (!fs.existsSync(p)) { // node removes its socket on close; make a bound, unlistened one instead
    const s = net.createServer();
    await new Promise((r) => s.listen(p, r));
    fs.renameSync(p, p + '.x');
    s.close();
    fs.renameSync(p + '.x', p);
  }
  await assert.rejects(new AuthorityClient(unixEndpoint(p), { retry: FAST }).run('run-1'), HelperUnreachable);
});

test('bounds: an oversized head, Content-Length, chunked or unframed body is a HelperProtocolError, never read whole', async (t) => {
  const huge = 9 * 1024 * 1024;
  let reply;
  const { c, s } = await withSession(t, (req, sock) => reply(sock), { client: { retry: RetryPolicy.NONE } });
  reply = (sock) => sock.end(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70 * 1024)}\r\n\r\n`);
  await assert.rejects(c.run('run-1'), /head from the helper is larger/);
  reply = (sock) => sock.end(`HTTP/1.1 200 OK\r\nContent-Length: ${huge}\r\n\r\n`);
  await assert.rejects(c.run('run-1'), /larger than 8388608 bytes/);
  reply = (sock) => { sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'); sock.end(`800000\r\n${'a'.repeat(0x800000)}\r\n10\r\n${'a'.repeat(16)}\r\n0\r\n\r\n`); };
  await assert.rejects(c.run('run-1'), /larger than 8388608 bytes/);
  reply = (sock) => {
    sock.write('HTTP/1.1 200 OK\r\n\r\n');
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const pump = () => { while (!sock.destroyed && sock.write(chunk)); };
    sock.on('drain', pump);
    pump();
  };
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperProtocolError && /larger than/.test(e.message));
  reply = (sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello');
  await assert.rejects(c.run('run-1'), /conflicting Content-Length/);
  reply = (sock) => sock.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n');
  await assert.rejects(c.run('run-1'), /unsupported transfer encoding/);
  reply = (sock) => sock.end('SMTP ready\r\n\r\n');
  await assert.rejects(c.run('run-1'), /malformed status line/);
  reply = (sock) => sock.end(answer(200, '{"run_id":'));
  await assert.rejects(c.run('run-1'), /malformed JSON/);
  reply = (sock) => sock.end(answer(200, { run_id: 'run-1', phase: 'ACTIVE', run_generation: 1.5 }));
  await assert.rejects(c.run('run-1'), /not a run/);
  reply = (sock) => sock.end();
  await assert.rejects(c.run('run-1'), /closed the connection without a response/);
  reply = (sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
  await assert.rejects(c.run('run-1'), /closed the connection mid-response/);
});

test('bounds: an answer in many one-byte chunks parses in linear time; past the bound it is refused', async (t) => {
  let reply;
  const { c } = await withSession(t, (req, sock) => reply(sock), { client: { retry: RetryPolicy.NONE, readTimeoutMs: 5000 } });
  reply = (sock) => sock.end(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'),
    ...[...Buffer.from(RUN)].map((b) => Buffer.concat([Buffer.from('1\r\n'), Buffer.from([b]), Buffer.from('\r\n')])), Buffer.from('0\r\n\r\n')]));
  assert.equal((await c.run('run-1')).runGeneration, 18446744073709551614n);
  const one = Buffer.from('1\r\na\r\n');
  const flood = Buffer.alloc(one.length * (8 * 1024 * 1024 + 16));
  for (let i = 0; i < flood.length; i += one.length) one.copy(flood, i);
  reply = (sock) => { sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'); sock.end(flood); };
  const t0 = Date.now();
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperProtocolError && /larger than/.test(e.message));
  assert.ok(Date.now() - t0 < 15000, `${Date.now() - t0} ms`);
});

test('deadlines: a helper that drips its answer or says nothing is cut off within the deadline, never retried', async (t) => {
  let reply;
  let count = 0;
  const { c, s } = await withSession(t, (req, sock) => { count++; reply(sock); }, { client: { readTimeoutMs: 150 } });
  reply = () => {}; // silent
  let t0 = Date.now();
  await assert.rejects(c.release(s, 'run-1'), (e) => e instanceof HelperTimeout && outcomeUnknown(e));
  assert.ok(Date.now() - t0 < 1000, `silent: ${Date.now() - t0} ms`);
  assert.equal(count, 1);
  count = 0;
  reply = (sock) => {
    const text = answer(200, RUN);
    let i = 0;
    // The delay is the subject: one byte every 40 ms, well within each read timeout of 150 ms.
    const tick = setInterval(() => { if (sock.destroyed || i >= text.length) clearInterval(tick); else sock.write(text.subarray(i, ++i)); }, 40);
    sock.on('close', () => clearInterval(tick));
  };
  t0 = Date.now();
  await assert.rejects(c.resume(s, 'run-1'), HelperTimeout);
  const took = Date.now() - t0;
  assert.ok(took >= 12 * 150 - 50 && took < 12 * 150 + 1000, `drip: ${took} ms`);
  assert.equal(count, 1);
});

test('a refusal sent before the body was read is the outcome, not an unknown one', async (t) => {
  const f = await fakeHelper(t, (req, sock) => {
    sock.end(problem(413, 'invalid_request', 'body too large'));
    sock.destroy();
  }, { readBody: false });
  const c = client(f, { retry: RetryPolicy.NONE });
  const sessionless = await assert.rejects(c.inspect(new Uint8Array(12 * 1024 * 1024)), (e) => e instanceof InvalidRequest && e.status === 413);
  void sessionless;
});

test('abort: a signal aborted before sending is HelperInterrupted and nothing reaches the helper', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)));
  const c = client(f);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(c.run('run-1', { signal: ac.signal }), (e) => e instanceof HelperInterrupted && e.nothingSent);
  assert.equal(f.state.connections, 0);
});

test('abort: a signal aborted after the request was sent ends the wait at once; the outcome is unknown', { timeout: 10000 }, async (t) => {
  const { c, s, f } = await withSession(t, () => {}); // never answers
  const ac = new AbortController();
  const t0 = Date.now();
  const call = c.release(s, 'run-1', { signal: ac.signal });
  while (f.state.requests.length < 2) await new Promise((r) => setImmediate(r)); // the release arrived
  ac.abort();
  await assert.rejects(call, (e) => e.name === 'HelperConnectionLost' && outcomeUnknown(e) && !e.nothingSent);
  assert.ok(Date.now() - t0 < 900, 'well before the read timeout');
});

test('run IDs: one breaking the run-ID rule is refused before anything is sent', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)));
  const c = client(f);
  for (const bad of ['', ' run', 'a'.repeat(97), 'run\u0001', 'run-\ud800', 'run\u0085']) {
    await assert.rejects(c.run(bad), TypeError, JSON.stringify(bad));
  }
  assert.equal(f.state.connections, 0);
  assert.equal((await c.run('run/1 é')).runId, 'run-1');
  assert.equal(f.state.requests[0].target, '/v1/runs/run%2F1%20%C3%A9');
});

// ---- the Unix socket's owner ---------------------------------------------------------------

test('peer check: an endpoint directory that is not 0700, or an ancestor others may write without the sticky bit, is refused before connecting', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)));
  const c = client(f);
  assert.equal((await c.run('run-1')).runId, 'run-1');
  fs.chmodSync(f.endpointDir, 0o755);
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /mode 0700/.test(e.message) && e.nothingSent);
  fs.chmodSync(f.endpointDir, 0o700);
  fs.chmodSync(f.dir, 0o777);
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /writable by others/.test(e.message));
  fs.chmodSync(f.dir, 0o1777);
  assert.equal((await c.run('run-1')).runId, 'run-1'); // sticky, like /tmp
  fs.chmodSync(f.dir, 0o700);
  assert.equal(f.state.connections, 2);
});

test('peer check: a symbolic link at the socket path is refused; a linked directory is resolved once, then checked', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)));
  const link = path.join(f.endpointDir, 'link.sock');
  fs.symlinkSync(path.join(f.endpointDir, 'authority.sock'), link);
  await assert.rejects(client({ endpoint: unixEndpoint(link) }).run('run-1'), (e) => e instanceof HelperUntrusted && /not a socket/.test(e.message));
  const dirLink = path.join(f.dir, 'linked');
  fs.symlinkSync(f.endpointDir, dirLink);
  assert.equal((await client({ endpoint: unixEndpoint(path.join(dirLink, 'authority.sock')) }).run('run-1')).runId, 'run-1');
  assert.equal(f.state.connections, 1);
});

test('peer check: another user\'s socket or endpoint directory is refused (needs root to arrange)', { skip: process.getuid() !== 0 ? 'not root: cannot chown' : false }, async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)));
  const sock = path.join(f.endpointDir, 'authority.sock');
  fs.lchownSync(sock, 4242, 4242);
  await assert.rejects(client(f).run('run-1'), (e) => e instanceof HelperUntrusted && /another user's socket/.test(e.message));
  fs.lchownSync(sock, 0, 0);
  fs.chownSync(f.endpointDir, 4242, 4242);
  await assert.rejects(client(f).run('run-1'), (e) => e instanceof HelperUntrusted && /must be yours/.test(e.message));
  fs.chownSync(f.endpointDir, 0, 0);
  fs.chownSync(f.dir, 4242, 4242);
  await assert.rejects(client(f).run('run-1'), (e) => e instanceof HelperUntrusted && /owned by another user/.test(e.message));
  fs.chownSync(f.dir, 0, 0);
  assert.equal(f.state.connections, 0);
});

// ---- TCP: the token file and the endpoint proof ---------------------------------------------

test('tcp: the endpoint proof comes first on the same connection, then the request carries the token', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)), { tcp: true });
  const c = client(f);
  assert.equal((await c.run('run-1')).runId, 'run-1');
  assert.equal(f.state.connections, 1);
  assert.equal(f.state.requests[0].headers.authorization, `Bearer ${TOKEN}`);
});

for (const mode of ['bad', 'relayed', 'close', 'silent']) {
  test(`tcp: a server whose endpoint proof is ${mode} is HelperUntrusted; neither token nor request is sent`, async (t) => {
    const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)), { tcp: true, proof: mode });
    const c = client(f, { readTimeoutMs: 300 });
    const t0 = Date.now();
    await assert.rejects(c.run('run-1'), (e) => {
      assert.ok(e instanceof HelperUntrusted && e.nothingSent, e.message);
      assert.ok(!e.message.includes(TOKEN), 'no token in the message');
      return true;
    });
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(f.state.requests.length, 0);
  });
}

test('tcp: a token file that is not yours 0600 single-link in a 0700 directory is refused unread, nothing sent', async (t) => {
  const f = await fakeHelper(t, (req, sock) => sock.end(answer(200, RUN)), { tcp: true });
  const file = f.endpoint.tokenFile;
  const c = client(f);
  fs.chmodSync(file, 0o644);
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /mode 0600/.test(e.message) && !e.message.includes(TOKEN));
  fs.chmodSync(file, 0o600);
  fs.chmodSync(path.dirname(file), 0o750);
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /directory must be yours/.test(e.message));
  fs.chmodSync(path.dirname(file), 0o700);
  fs.linkSync(file, file + '.2');
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /single-link/.test(e.message));
  fs.unlinkSync(file + '.2');
  const link = path.join(path.dirname(file), 'link');
  fs.symlinkSync(file, link);
  await assert.rejects(client({ endpoint: { ...f.endpoint, tokenFile: link } }).run('run-1'), HelperUntrusted);
  fs.writeFileSync(file, 'not a token\n');
  await assert.rejects(c.run('run-1'), (e) => e instanceof HelperUntrusted && /visible ASCII/.test(e.message) && !e.message.includes('not a token\n'));
  fs.unlinkSync(file);
  await assert.rejects(c.run('run-1'), HelperUnreachable);
  assert.equal(f.state.connections, 0);
});

test('tcp: only loopback IP literals are endpoints', async () => {
  const { tcpEndpoint } = await import('../index.js');
  assert.throws(() => tcpEndpoint({ host: 'localhost', port: 1, tokenFile: '/x' }), TypeError);
  assert.throws(() => tcpEndpoint({ host: '10.0.0.1', port: 1, tokenFile: '/x' }), TypeError);
  assert.throws(() => tcpEndpoint({ host: '::2', port: 1, tokenFile: '/x' }), TypeError);
  assert.equal(tcpEndpoint({ host: '::1', port: 8, tokenFile: '/x' }).display, 'http://[::1]:8');
  assert.equal(tcpEndpoint({ host: '127.1.2.3', port: 8, tokenFile: '/x' }).display, 'http://127.1.2.3:8');
});

test('the default endpoint: $XDG_RUNTIME_DIR/spice-agent when absolute, else /tmp/spice-agent-<uid> (/private/tmp on macOS)', async () => {
  const { defaultEndpointDirectory } = await import('../index.js');
  assert.equal(defaultEndpointDirectory({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000, 'linux'), '/run/user/1000/spice-agent');
  assert.equal(defaultEndpointDirectory({ XDG_RUNTIME_DIR: 'run/user' }, 1000, 'linux'), '/tmp/spice-agent-1000');
  assert.equal(defaultEndpointDirectory({ XDG_RUNTIME_DIR: '/run/user/1000/' }, 1000, 'linux'), '/tmp/spice-agent-1000');
  assert.equal(defaultEndpointDirectory({}, 501, 'darwin'), '/private/tmp/spice-agent-501');
  assert.equal(defaultEndpointDirectory({}, -1, 'linux'), null);
});

test('backoff: doubles from the initial pause up to the maximum; a longer Retry-After is honoured up to the maximum', async () => {
  const { backoffMs } = await import('../index.js');
  const p = RetryPolicy.DEFAULT;
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => backoffMs(p, a, null)), [50, 100, 200, 400, 800, 1000]);
  assert.equal(backoffMs(p, 1, 300), 300);
  assert.equal(backoffMs(p, 1, 5000), 1000);
  assert.equal(backoffMs(p, 3, 10), 200);
  assert.throws(() => new AuthorityClient(unixEndpoint('/x'), { retry: { maxAttempts: 0, initialBackoffMs: 0, maxBackoffMs: 0 } }), RangeError);
});
