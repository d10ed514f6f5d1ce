// Compiled by `npm run typecheck` only (never run): the declarations used as a host would.
import {
  AuthorityClient, Busy, HelperProblem, ImportUncertain, SnapshotBuilder, ToolDefinition, importRun, planIdentity,
  planMatches, staticToolPlanId, unixEndpoint, validatePayload,
} from '../index.js';

export async function example(payload: Uint8Array, envelope: Uint8Array): Promise<bigint> {
  const client = new AuthorityClient(unixEndpoint('/run/user/1000/spice-agent/authority.sock'), { readTimeoutMs: 5000 });
  const session = await client.openSession();
  const view = await client.start(session, 'run-1');
  const generation: bigint = view.runGeneration;
  const signed: Uint8Array = await client.sign(session, 'run-1', payload);
  void signed;
  try {
    await client.release(session, 'run-1');
  } catch (e) {
    if (e instanceof Busy && e.nothingHappened) return generation;
    if (e instanceof HelperProblem.Uncertain) throw e;
  }
  const read = new ToolDefinition({ name: 'read', description: 'Read.', inputSchema: '{}', effect: 'read_only', replaySafety: 'safe', capabilities: ['filesystem.read'] });
  const plan = planIdentity(['stage:kernel'], staticToolPlanId([read]), 'app:1', [read]);
  const v = validatePayload(payload);
  if (!v.ok) return BigInt(v.rule.length);
  const built = new SnapshotBuilder().runId('run-1').definition({ name: 'n', model: 'm', maxTurns: 3 }).completedTurns(1)
    .addMessage({ id: 'i', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }).planIdentity(plan)
    .seenInteractionIds([]).lastSequence(7n).status('suspended').build();
  try {
    const r = await importRun({
      client, session, envelope,
      checkPlan: (s) => { if (!planMatches(s.planIdentity, [read])) throw new Error('plan changed'); },
      commit: (s, tx) => ({ id: s.runId, next: tx.nextSequence }),
      stop: (run) => { void run.id; },
    });
    return r.run.next + built.lastSequence;
  } catch (e) {
    if (e instanceof ImportUncertain) return 0n;
    throw e;
  }
}
