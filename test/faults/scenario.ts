import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { REPO_ROOT, TestFleet, waitFor } from '@oan/testing';
import { dumpTables, matchTwoAccounts } from '../support.ts';
import { openParty } from './parties.ts';
import { eventStoreSchemas, projectionCaughtUp, readTablesOf, storeHeads, waitQuiet } from './database.ts';
import { ok, startLoad, tally, unclean, type LoadRun, type Party, type Sent } from './load.ts';
import {
  awaitChatRows,
  awaitRelays,
  seqViolations,
  socketViolations,
  stallReport,
  storeViolations,
} from './verify.ts';

/** What one fault file shares across its tests: its fleet, the parties of the load, a report. */
export interface Scene {
  fleet: TestFleet;
  parties: Party[];
  conversationId?: string;
  report: string[];
}

const dead = (fleet: TestFleet) =>
  [...fleet.running.values()].filter((p) => p.child.exitCode !== null).map((p) => p.spec.name);

/**
 * Runs the load, applies `fault` once it flows, keeps it while the load makes a dozen more attempts
 * (a condition, not a fixed sleep), lifts it, and waits until the load flows again.
 */
export async function underLoad(
  scene: Scene,
  label: string,
  fault: () => Promise<void>,
  lift: () => Promise<void>,
): Promise<LoadRun> {
  const run = startLoad(`${label}-${scene.fleet.id}`, scene.parties, scene.conversationId);
  const oks = () => run.sent.filter(ok).length;
  const attempts = () => run.sent.length + run.reads.length;
  const t0 = Date.now();
  let down = 0;
  let up = 0;
  try {
    await waitFor(() => oks() >= 8, { timeoutMs: 30_000, what: 'the load to flow' });
    await fault();
    down = Date.now();
    const before = attempts();
    await waitFor(() => attempts() >= before + 12, { timeoutMs: 30_000, what: 'attempts during the outage' });
    await lift();
    up = Date.now();
    const after = oks();
    await waitFor(() => oks() >= after + 8, { timeoutMs: 60_000, what: 'the load to flow again' });
  } finally {
    await run.stop();
  }
  const slowest = (kind: Sent['kind']) =>
    Math.max(0, ...run.sent.filter((s) => s.kind === kind).map((s) => s.outcome.ms));
  scene.report.push(
    `${label}: down ${up - down} ms, load ${Date.now() - t0} ms; writes ${JSON.stringify(tally(run.sent.map((s) => s.outcome)))}; ` +
      `reads ${JSON.stringify(tally(run.reads))}; slowest chat ${slowest('chat')} ms, message ${slowest('message')} ms, ` +
      `read ${Math.max(0, ...run.reads.map((o) => o.ms))} ms`,
  );
  return run;
}

/** The proofs after each fault: clean failures, the stores, the seq table and every socket. */
export async function expectNothingLost(scene: Scene, run: LoadRun): Promise<void> {
  const db = scene.fleet.env.DATABASE_URL!;
  expect(dead(scene.fleet), 'processes that died').toEqual([]);
  expect(unclean([...run.sent.map((s) => s.outcome), ...run.reads]), 'unclean answers').toEqual([]);
  expect(await storeViolations(db, run), 'event stores').toEqual([]);
  expect(await awaitRelays(db, run), 'relay_message rows').toEqual([]);
  const missing = await awaitChatRows(db, run);
  if (missing.length > 0) missing.push(...(await stallReport(db, scene.fleet.logDir)));
  expect(missing, 'chat rows').toEqual([]);
  expect(
    await seqViolations(
      db,
      scene.parties.map((p) => p.userId),
    ),
    'seq',
  ).toEqual([]);
  for (const p of scene.parties) expect(await socketViolations(p), `sockets of ${p.name}`).toEqual([]);
}

/** A dependency that was down is an unavailable dependency (libs/http isDependencyDown): 503, never a 500. */
export function expectFailuresAre503(run: LoadRun): void {
  const failed = [...run.sent.map((s) => s.outcome), ...run.reads].filter(
    (o) => typeof o.status === 'number' && o.status >= 500,
  );
  expect(failed.length).toBeGreaterThan(0);
  expect(failed.map((o) => o.status)).toEqual(failed.map(() => 503));
}

/**
 * Replay rebuilds, after the faults: with every projector replica stopped, the replay CLI rebuilds
 * every read model and the event table exactly as they were; then the replicas come back.
 *
 * The work the faults delayed can still append after the fleet looks quiet (in one nemesis run the
 * replay had two accounts' gofers events that the snapshot had not; likely Gofer turns held back by a
 * broker kill): a replay reads the topics to their end, so an event appended after the snapshot is in
 * the replay and not in the snapshot. The comparison is made only for a snapshot taken when the
 * projection had applied everything stored and no store grew until the replay ended; a snapshot
 * another append overtook is taken again (three attempts).
 */
export async function expectReplayRebuilds(fleet: TestFleet): Promise<void> {
  const db = fleet.env.DATABASE_URL!;
  const tables = await readTablesOf(db);
  expect(tables).toContain('read.oan_event');
  const schemas = await eventStoreSchemas(db);
  // Every running replica: a standing-by one would take the partitions over and write during the replay.
  const projectors = fleet.replicasOf('projector').filter((name) => fleet.running.has(name));
  const overtaken: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    await waitQuiet(db, tables);
    await waitFor(() => projectionCaughtUp(db, schemas), {
      timeoutMs: 60_000,
      what: 'the projection to apply everything stored',
    });
    for (const name of projectors) await fleet.kill(name);
    const heads = await storeHeads(db, schemas);
    const before = await dumpTables(db, tables);
    // The projectors are down, so the tables cannot change: this holds unless a store grew meanwhile.
    if (await projectionCaughtUp(db, schemas)) {
      execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...fleet.env },
        stdio: 'pipe',
      });
      const after = await dumpTables(db, tables);
      const headsAfter = await storeHeads(db, schemas);
      if (headsAfter === heads) {
        for (const t of tables) expect(after[t], t).toEqual(before[t]);
        for (const name of projectors) await fleet.restart(name);
        return;
      }
      overtaken.push(
        `attempt ${attempt}: the stores' heads went from ${heads} to ${headsAfter} during the replay`,
      );
    } else {
      overtaken.push(`attempt ${attempt}: a store grew between the projection catching up and the snapshot`);
    }
    for (const name of projectors) await fleet.restart(name);
  }
  throw new Error(`no snapshot held still until its replay ended:\n${overtaken.join('\n')}`);
}

/** A fleet with two matched accounts whose parties carry the load (their matching connectors closed). */
export async function openScene(env: Record<string, string>, names: [string, string]): Promise<Scene> {
  const fleet = await TestFleet.start({ env });
  const scene: Scene = { fleet, parties: [], report: [] };
  try {
    const m = await matchTwoAccounts(fleet, names);
    m.ca.close();
    m.cb.close();
    scene.conversationId = m.conversationId;
    scene.parties = [await openParty(fleet.url, 'a', m.a, m.ga), await openParty(fleet.url, 'b', m.b, m.gb)];
    return scene;
  } catch (err) {
    // The caller never gets the scene to close: stop the fleet here, or its processes outlive the run.
    await closeScene(scene);
    throw err;
  }
}

/** Closes the parties' sockets, prints the report, stops the fleet. */
export async function closeScene(scene: Scene | undefined): Promise<void> {
  for (const p of scene?.parties ?? []) for (const c of p.connectors) c.close();
  if (scene?.report.length) console.log(`faults:\n${scene.report.join('\n')}`);
  await scene?.fleet.stop();
}
