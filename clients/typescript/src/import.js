// The import order of RFC 0007 (wire-format.md e.7) as one call; mirrors Engine.importRun of
// the Java reference engine.
//
// Guarantees:
// - Order: the helper prepares (verifies the claim, locks the run) before anything else; then the
//   caller's plan check; then consume (the durable consume point), the caller's commit, activate.
// - Any failure before consume aborts the prepared import (DELETE /v1/imports/{id}) and is an
//   ImportRefused; nothing of the caller's is left.
// - From consume on, a failure is ImportUncertain and is never retried (the client repeats a call
//   only on an answer that proves nothing happened; never one whose outcome is unknown).
// - An activate that fails stops the caller's run (`stop`, awaited) BEFORE the import is released
//   and a lease the activate may have taken is handed back; the run never executes.

import { ImportRefused, ImportUncertain, outcomeUnknown } from './errors.js';
import { EnvelopeRejected, parseEnvelope } from './envelope.js';
import { PayloadRejected, decodeSnapshot } from './payload.js';
import { planMatches } from './plan.js';
import { compareUtf8 } from './gojson.js';

/**
 * Imports a signed envelope exported by another (dead) host process and activates it here.
 *
 * @param {object} o
 * @param {import('./client.js').AuthorityClient} o.client
 * @param {import('./client.js').Session} o.session this host's session
 * @param {Uint8Array} o.envelope the signed envelope (binary protobuf)
 * @param {(snapshot: object, tx: object) => unknown} o.checkPlan the caller's check (compatibility,
 *   compiled identities, the recorded tool plan leased and the plan identity recomputed); throw to
 *   refuse; it runs after prepare and before consume
 * @param {(snapshot: object, tx: object) => unknown} o.commit commits the caller's run (not
 *   executing yet) after the consume point; returns the caller's run handle
 * @param {(run: unknown) => unknown} o.stop stops and joins the committed run; called, and awaited,
 *   when activate fails, before the import is released
 * @param {AbortSignal} [o.signal]
 * @returns {Promise<{snapshot: object, tx: object, run: unknown, view: object}>} after activate:
 *   the run may now execute, continuing at `tx.nextSequence`
 * @throws {ImportRefused} before the consume point (the prepared import was aborted)
 * @throws {ImportUncertain} from the consume point on (never retried; the run must not execute)
 */
export async function importRun({ client, session, envelope, checkPlan, commit, stop, signal }) {
  let snapshot;
  try {
    const env = parseEnvelope(envelope);
    snapshot = decodeSnapshot(env.payload);
    // The helper builds the envelope from the validated payload: they agree, or it is not the helper's.
    if (env.runId !== snapshot.runId || env.lastSequence !== snapshot.lastSequence || env.status !== snapshot.status) {
      throw new EnvelopeRejected('E-AGREEMENT', 'run_id, last_sequence and lifecycle must match the payload');
    }
  } catch (e) {
    if (e instanceof EnvelopeRejected || e instanceof PayloadRejected) {
      throw new ImportRefused('MALFORMED', `the envelope is not a valid snapshot envelope: ${e.message}`, e);
    }
    throw e;
  }
  const runId = snapshot.runId;
  const opts = { signal };

  // 1. The helper verifies the claim and locks the run before any host-side work.
  let tx;
  let firstLost = false;
  try {
    try {
      tx = await client.prepareImport(session, envelope, opts);
    } catch (lost) {
      if (!outcomeUnknown(lost) || signal?.aborted) throw lost;
      // Prepare writes nothing durable, and the helper answers its session preparing the identical
      // envelope again (before consume) with the import it already holds.
      firstLost = true;
      tx = await client.prepareImport(session, envelope, opts);
    }
  } catch (e) {
    throw new ImportRefused('AUTHORITY_REFUSED', (firstLost || outcomeUnknown(e)
      ? `the helper's answer to the import of run ${runId} was lost (nothing durable was written; it may hold the prepared import until this session ends): `
      : `the helper refused to import run ${runId}: `) + e.message, e);
  }

  let consumed = false;
  let activated = false;
  let run;
  try {
    // 2. Host-side checks; any refusal aborts the prepared import (finally, below).
    if (tx.runId !== runId || tx.lastSequence !== snapshot.lastSequence) {
      throw new ImportRefused('MALFORMED', "the helper prepared another run or sequence than the envelope's");
    }
    if (snapshot.status !== 'suspended') {
      throw new ImportRefused('NOT_SUSPENDED', `run ${runId} is ${snapshot.status}: terminal snapshots are inspectable, never resumable`);
    }
    try {
      await checkPlan(snapshot, tx);
    } catch (e) {
      throw new ImportRefused('PLAN_REFUSED', `run ${runId}: the plan check refused the import: ${e?.message ?? e}`, e);
    }

    // 3. Consume: the durable consume point.
    try {
      await client.consume(session, tx, opts);
    } catch (e) {
      if (outcomeUnknown(e)) {
        consumed = true; // may have happened: the finally must not pretend otherwise
        await abortQuietly(client, session, tx, e);
        throw new ImportUncertain(runId, `consume of run ${runId} is uncertain: ${e.message}; it is not retried`, e);
      }
      throw new ImportRefused('CONSUME_REFUSED', `the helper refused to consume run ${runId}: ${e.message}`, e);
    }
    consumed = true;

    // 4. Commit the caller's run (not executing: no lease yet).
    try {
      run = await commit(snapshot, tx);
    } catch (e) {
      await abortQuietly(client, session, tx, e);
      throw new ImportUncertain(runId, `run ${runId} could not be committed after its consume point (${e?.message ?? e}); the import was released and is not retried`, e);
    }

    // 5. Activate: only a returned active lease lets the run execute.
    let view;
    try {
      view = await client.activate(session, tx, opts);
    } catch (e) {
      // RFC 0007: stop and join the committed run before abort releases the import lock.
      let stopFailure = '';
      try {
        await stop(run);
      } catch (s) {
        stopFailure = `; stopping the committed run failed too (${s?.message ?? s})`;
      }
      await abortQuietly(client, session, tx, e);
      // An activate that took effect left the run ACTIVE with this session's lease: hand it back,
      // so the run can be abandoned before the session ends.
      let handBack;
      try {
        await client.release(session, runId);
        handBack = '; any lease the activate took was handed back';
      } catch {
        handBack = '; whether this session holds its lease is unknown (the release failed); the session\'s end releases any';
      }
      throw new ImportUncertain(runId, `activate of run ${runId} failed after consume (${e.message}); the committed run was stopped, and is not retried${stopFailure}${handBack}`, e);
    }
    activated = true;
    return { snapshot, tx, run, view };
  } finally {
    if (!consumed && !activated) {
      // Before the consume point: nothing durable happened; release the helper's lock now.
      await abortQuietly(client, session, tx, null);
    }
  }
}

async function abortQuietly(client, session, tx, primary) {
  try {
    await client.abortImport(session, tx);
  } catch (e) {
    // After consume the helper answers uncertain and keeps the run fenced: the primary failure
    // already says so. Before consume a failed abort leaves the prepared import to end with the session.
    if (primary !== null && typeof primary === 'object') {
      (primary.suppressed ??= []).push(e);
    }
  }
}

/**
 * The standard plan check of the reference engine (Engine.checkAndLease), as a `checkPlan` for
 * importRun: the recorded compatibility identity must be non-empty (a convenience engine's run is
 * not importable) and equal this host's, the compiled identities equal this host's (sorted), the
 * recorded tool plan is leased by its ID (`lease(toolPlanId)` returns the tool definitions, or
 * throws when the plan is unavailable) and the plan identity recomputed from the leased tools must
 * match the recorded fingerprint (a changed tool definition is refused).
 * @param {{compatibilityIdentity: string, compiledIdentities: readonly string[],
 *   lease: (toolPlanId: string) => readonly object[] | Promise<readonly object[]>}} host
 * @returns {(snapshot: object) => Promise<readonly object[]>} resolves to the leased tools
 */
export function planCheck(host) {
  if (typeof host.compatibilityIdentity !== 'string' || host.compatibilityIdentity === '') {
    throw new TypeError('this host has no compatibility identity: import requires an explicit one');
  }
  const compiled = [...host.compiledIdentities].sort(compareUtf8);
  return async (snapshot) => {
    const recorded = snapshot.planIdentity;
    if (recorded.snapshotCompatibilityIdentity === '') {
      throw new Error(`run ${snapshot.runId} was exported by a convenience engine: import requires an explicit compatibility identity`);
    }
    if (recorded.snapshotCompatibilityIdentity !== host.compatibilityIdentity
      || recorded.compiledIdentities.length !== compiled.length || recorded.compiledIdentities.some((c, i) => c !== compiled[i])) {
      throw new Error(`run ${snapshot.runId} was exported by an engine with another compatibility or compiled identity`);
    }
    const tools = await host.lease(recorded.toolPlanId);
    if (!planMatches(recorded, tools)) {
      throw new Error(`the recomputed plan identity of ${recorded.toolPlanId} differs from the recorded one: a tool definition changed`);
    }
    return tools;
  };
}
