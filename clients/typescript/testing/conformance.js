// The conformance runner's machinery (spec-kit/conformance/README.md): the step executor (used by
// the runner's own process and by spawned host processes), scenario checks, and the helper the
// runner starts itself when given a jar. Not part of the package.
//
// A host process is this file run as a program: one JSON call per line on standard input, one
// JSON outcome per line on standard output, until the end of input.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  AuthorityClient, RetryPolicy, HelperProblem, unixEndpoint, tcpEndpoint,
} from '../index.js';
import { parseJson } from '../src/json.js';

export const FORMAT = 'spice-authority-conformance/v1';
const THIS_FILE = fileURLToPath(import.meta.url);

/** The endpoint as JSON-able description: {socket} or {host, port, tokenFile}. */
export function endpointOf(desc) {
  return desc.socket ? unixEndpoint(desc.socket) : tcpEndpoint(desc);
}

/** Executes resolved calls with its own client and sessions (by name). */
export class Executor {
  constructor(endpointDesc) {
    // Every call is made once: a scenario sees the helper's first answer.
    this.client = new AuthorityClient(endpointOf(endpointDesc), { retry: RetryPolicy.NONE, readTimeoutMs: 15000 });
    this.sessions = new Map();
    this.closed = new Set();
  }

  /**
   * @param {{op: string, session?: string, runId?: string, payload?: string, envelope?: string, importId?: string}} c
   *   payload and envelope base64
   * @returns {Promise<{status: number, code?: string, rule?: string, body?: string, error?: string}>} body base64
   */
  async execute(c) {
    let status = 0;
    let body = Buffer.alloc(0);
    const options = { onAnswer: (s, b) => { status = s; body = b; } };
    const session = () => {
      const s = this.sessions.get(c.session);
      if (!s) throw new Error(`no open session ${c.session} in this process`);
      return s;
    };
    const tx = () => ({ importId: c.importId });
    const bytes = (b64) => new Uint8Array(Buffer.from(b64, 'base64'));
    const cl = this.client;
    try {
      switch (c.op) {
        case 'open_session': this.sessions.set(c.session, await cl.openSession(options)); break;
        case 'close_session': await cl.closeSession(session(), options); this.closed.add(c.session); break; // kept: a later step may use the closed session
        case 'authority': await cl.authority(options); break;
        case 'start': await cl.start(session(), c.runId, options); break;
        case 'sign': await cl.sign(session(), c.runId, bytes(c.payload), options); break;
        case 'resume': await cl.resume(session(), c.runId, options); break;
        case 'release': await cl.release(session(), c.runId, options); break;
        case 'get_run': await cl.run(c.runId, options); break;
        case 'list_runs': await cl.runs(options); break;
        case 'abandon': await cl.abandon(session(), c.runId, options); break;
        case 'prepare_import': await cl.prepareImport(session(), bytes(c.envelope), options); break;
        case 'consume': await cl.consume(session(), tx(), options); break;
        case 'activate': await cl.activate(session(), tx(), options); break;
        case 'abort_import': await cl.abortImport(session(), tx(), options); break;
        case 'inspect': await cl.inspect(bytes(c.envelope), options); break;
        case 'close_all': await this.closeAll(); return { status: 0 };
        default: return { status: 0, error: `unknown step ${c.op}` };
      }
      return { status, body: body.toString('base64') };
    } catch (e) {
      if (e instanceof HelperProblem) {
        return { status: e.status, code: e.code, rule: e.rule, body: body.toString('base64'), error: `${e.name}: ${e.message}` };
      }
      return { status, error: `${e.name}: ${e.message}` };
    }
  }

  async closeAll() {
    for (const [name, s] of this.sessions) {
      try {
        if (!this.closed.has(name)) await this.client.closeSession(s);
      } catch {
        // it may be gone already
      }
      this.sessions.delete(name);
    }
    this.closed.clear();
  }
}

/** A host process of this language running this file as an agent. */
export class Agent {
  constructor(endpointDesc) {
    this.proc = spawn(process.execPath, [THIS_FILE, JSON.stringify(endpointDesc)], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.lines = readline.createInterface({ input: this.proc.stdout });
    this.pending = [];
    this.lines.on('line', (l) => this.pending.shift()?.(JSON.parse(l)));
    this.lines.on('close', () => { for (const p of this.pending.splice(0)) p({ status: 0, error: 'the host process ended' }); });
  }

  get pid() {
    return this.proc.pid;
  }

  execute(call) {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.proc.stdin.write(JSON.stringify(call) + '\n');
    });
  }

  async kill() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    await this.exited;
  }
}

/** Loads every scenario of `dir`, sorted by file name. */
export function loadScenarios(kitDir) {
  const dir = path.join(kitDir, 'scenarios');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => ({ file: f, scenario: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }));
}

class StepFailed extends Error {}

const SUCCESS = {
  open_session: 200, close_session: 204, authority: 200, start: 200, sign: 200, resume: 200, release: 204,
  get_run: 200, list_runs: 200, abandon: 200, prepare_import: 200, consume: 200, activate: 200, abort_import: 204,
  inspect: 200,
};
const RUN_VIEW_STEPS = new Set(['start', 'resume', 'get_run', 'abandon', 'consume', 'activate']);
const EXPECT_MEMBERS = new Set(['status', 'code', 'rule', 'view', 'same_as', 'differs_from', 'listed']);

/** Whether `actual` contains `want` (objects member by member, recursively; the rest exactly). */
function contains(actual, want) {
  if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(want).every(([k, v]) => Object.hasOwn(actual, k) && contains(actual[k], v));
  }
  if (Array.isArray(want)) {
    return Array.isArray(actual) && actual.length === want.length && want.every((v, i) => contains(actual[i], v));
  }
  if (typeof want === 'number' && Number.isInteger(want)) return typeof actual === 'bigint' ? actual === BigInt(want) : actual === want;
  return actual === want;
}

const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x));

/**
 * Runs one scenario; returns {name, passed, message}. Closes its sessions and kills its hosts.
 */
export async function runScenario(endpointDesc, kitDir, scenario, main) {
  const name = scenario.name ?? '(unnamed)';
  if (scenario.format !== FORMAT) return { name, passed: false, message: `format is not ${FORMAT}` };
  const prefix = `${Math.random().toString(16).slice(2, 10)}-${name}`;
  const runId = (run) => {
    const id = `${prefix}-${run}`;
    if (!/^[A-Za-z0-9._-]{1,96}$/.test(id)) throw new StepFailed(`run ID ${id} is not a token of [A-Za-z0-9._-] of at most 96 bytes`);
    return id;
  };
  const envelopes = new Map();
  const imports = new Map();
  const sessionHost = new Map();
  const agents = new Map();
  const opened = new Set(['main']);
  const hostOf = (session) => {
    const h = sessionHost.get(session) ?? 'main';
    if (h === 'main') return main;
    const a = agents.get(h);
    if (!a) throw new StepFailed(`host ${h} was not spawned`);
    return a;
  };
  let index = -1;
  let step;
  try {
    for (index = 0; index < scenario.steps.length; index++) {
      step = scenario.steps[index];
      await runStep(step);
    }
    return { name, passed: true, message: '' };
  } catch (e) {
    const where = index >= 0 && step ? `step ${index} (${step.do})` : 'setup';
    return { name, passed: false, message: `${where}: ${e instanceof StepFailed ? e.message : `${e.name}: ${e.message}`}` };
  } finally {
    await main.closeAll();
    for (const a of agents.values()) await a.kill();
    void opened;
  }

  async function runStep(s) {
    const expect = s.expect ?? null;
    if (expect) {
      for (const k of Object.keys(expect)) if (!EXPECT_MEMBERS.has(k)) throw new StepFailed(`this runner cannot check expect.${k}`);
      if (typeof expect.status !== 'number') throw new StepFailed('expect.status is required');
    }
    switch (s.do) {
      case 'spawn_host': {
        if (agents.has(s.host)) throw new StepFailed(`host ${s.host} already spawned`);
        agents.set(s.host, new Agent(endpointDesc));
        return;
      }
      case 'kill_host': {
        const a = agents.get(s.host);
        if (!a) throw new StepFailed(`host ${s.host} was not spawned`);
        await a.kill();
        for (const run of s.await_released ?? []) await awaitReleased(runId(run));
        return;
      }
      default:
    }
    if (!Object.hasOwn(SUCCESS, s.do)) throw new StepFailed(`unknown step ${s.do}`);
    const call = { op: s.do, session: s.session };
    if (s.do === 'open_session' && s.host && s.host !== 'main') sessionHost.set(s.session, s.host);
    if (s.run !== undefined) call.runId = runId(s.run);
    if (s.payload !== undefined) {
      const raw = fs.readFileSync(path.join(kitDir, 'payloads', s.payload));
      call.payload = Buffer.from(raw.toString('latin1').split('${run}').join(call.runId), 'latin1').toString('base64');
    }
    if (s.envelope !== undefined) {
      const env = envelopes.get(s.envelope);
      if (!env) throw new StepFailed(`no saved envelope ${s.envelope}`);
      call.envelope = env.bytes.toString('base64');
    }
    if (s.import !== undefined) {
      const tx = imports.get(s.import);
      if (!tx) throw new StepFailed(`no saved import ${s.import}`);
      call.importId = tx.import;
    }
    const host = s.session !== undefined ? hostOf(s.session) : main;
    const out = await host.execute(call);
    check(s, expect, out);
  }

  function check(s, expect, out) {
    const got = `got ${out.status}${out.code ? ` ${out.code}` : ''}${out.rule ? ` (rule ${out.rule})` : ''}${out.error && !out.code ? `: ${out.error}` : ''}`;
    if (expect === null) {
      if (!(out.status >= 200 && out.status < 300)) throw new StepFailed(`expected success, ${got}`);
    } else {
      if (out.status !== expect.status) throw new StepFailed(`expected status ${expect.status}, ${got}`);
      if (expect.status >= 400) {
        if (expect.code === undefined) throw new StepFailed('expect.code is required for a refusal');
        if (out.code !== expect.code) throw new StepFailed(`expected code ${expect.code}, ${got}`);
        if (expect.rule !== undefined && out.rule !== expect.rule) throw new StepFailed(`expected rule ${expect.rule}, ${got}`);
      } else if (expect.code !== undefined) {
        throw new StepFailed('expect.code is only allowed for a refusal');
      }
    }
    if (!(out.status >= 200 && out.status < 300)) return;
    if (out.error) throw new StepFailed(`the client refused the answer: ${out.error}`);
    const body = Buffer.from(out.body ?? '', 'base64');
    if (out.status !== SUCCESS[s.do]) throw new StepFailed(`expected the success status ${SUCCESS[s.do]}, got ${out.status}`);
    if (s.do === 'sign') {
      if (body.length === 0) throw new StepFailed('a sign answered 200 with an empty body');
      if (expect?.same_as !== undefined) {
        const other = envelopes.get(expect.same_as);
        if (!other || !other.bytes.equals(body)) throw new StepFailed(`the envelope is not byte-identical to ${expect.same_as}`);
      }
      if (expect?.differs_from !== undefined) {
        const other = envelopes.get(expect.differs_from);
        if (!other || other.bytes.equals(body)) throw new StepFailed(`the envelope does not differ from ${expect.differs_from}`);
      }
      if (s.save !== undefined) envelopes.set(s.save, { bytes: body, run: s.run });
      return;
    }
    let json = null;
    if (body.length > 0) json = parseJson(body);
    const viewRun = s.run ?? (s.import !== undefined ? imports.get(s.import).run : undefined);
    if (RUN_VIEW_STEPS.has(s.do) && json?.run_id !== runId(viewRun)) throw new StepFailed(`the run view names ${json?.run_id}, not ${runId(viewRun)}`);
    if (s.do === 'prepare_import') {
      const env = envelopes.get(s.envelope);
      if (json?.run_id !== runId(env.run)) throw new StepFailed(`the import names run ${json?.run_id}, not ${runId(env.run)}`);
      if (expect?.same_as !== undefined && imports.get(expect.same_as)?.import !== json.import) throw new StepFailed(`the import is not ${expect.same_as}`);
      if (s.save !== undefined) imports.set(s.save, { ...json, run: env.run });
    }
    let viewed = json;
    if (s.do === 'list_runs') {
      const entry = Array.isArray(json) ? json.find((r) => r?.run_id === runId(s.run)) : undefined;
      if (expect?.listed === true && entry === undefined) throw new StepFailed(`run ${runId(s.run)} is not listed`);
      if (expect?.listed === false && entry !== undefined) throw new StepFailed(`run ${runId(s.run)} is listed`);
      viewed = entry;
    }
    if (expect?.view !== undefined && !contains(viewed, expect.view)) {
      throw new StepFailed(`expected the view to contain ${show(expect.view)}, got ${show(viewed)}`);
    }
  }

  async function awaitReleased(id) {
    const end = Date.now() + 10000;
    for (;;) {
      const out = await main.execute({ op: 'get_run', runId: id });
      if (out.status === 200 && parseJson(Buffer.from(out.body, 'base64')).owned === false) return;
      if (Date.now() > end) throw new StepFailed(`run ${id} was still owned 10 s after its host was killed`);
      // Polling is the subject here (the helper's watcher releases asynchronously): 50 ms apart.
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Starts a helper from `jar` in a fresh temporary directory; resolves once it prints its
 * `listening on` line. `transport`: 'unix' or 'tcp'.
 */
export async function startHelper(jar, transport = 'unix') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spice-ts-helper-'));
  fs.chmodSync(dir, 0o700);
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const socket = path.join(dir, 'endpoint', 'authority.sock');
  const tokenFile = path.join(dir, 'endpoint', 'token');
  // As the launcher serves: a small heap (the helper's design target).
  const args = ['-XX:+UseSerialGC', '-Xmx128m', '--enable-native-access=ALL-UNNAMED', '-jar', jar, 'serve', '--authority-dir', path.join(dir, 'authority')];
  if (transport === 'unix') args.push('--socket', socket);
  else args.push('--listen', '127.0.0.1:0', '--token-file', tokenFile);
  const proc = spawn(java, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  let listening;
  try {
    listening = await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the helper did not start within 60 s:\n${log}`)), 60000);
      const onData = (d) => {
        log += d.toString();
        const m = /^listening on (\S+)$/m.exec(log);
        if (m) { clearTimeout(t); resolve(m[1]); }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', (d) => { log += d.toString(); });
      proc.once('exit', (code) => { clearTimeout(t); reject(new Error(`the helper exited (${code}) before listening:\n${log}`)); });
    });
  } catch (e) {
    proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });  // nothing of a helper that never listened is left
    throw e;
  }
  let desc;
  if (transport === 'unix') {
    desc = { socket };
  } else {
    const m = /^http:\/\/127\.0\.0\.1:([0-9]+)$/.exec(listening);
    desc = { host: '127.0.0.1', port: Number(m[1]), tokenFile };
  }
  return {
    endpoint: desc,
    pid: proc.pid,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 30000);
      await exited;
      clearTimeout(t);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- agent mode ----------------------------------------------------------------------------

if (process.argv[1] === THIS_FILE) {
  const ex = new Executor(JSON.parse(process.argv[2]));
  const rl = readline.createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    if (!line.trim()) return;
    chain = chain.then(async () => {
      const out = await ex.execute(JSON.parse(line));
      process.stdout.write(JSON.stringify(out) + '\n');
    });
  });
}
