import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { REPO_ROOT, TestFleet, waitFor } from '@oan/testing';
import { dumpTables, matchTwoAccounts } from '../support.ts';
import { openParty } from './parties.ts';
import { readTablesOf, waitQuiet } from './database.ts';
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
 */
export async function expectReplayRebuilds(fleet: TestFleet): Promise<void> {
  const db = fleet.env.DATABASE_URL!;
  const tables = await readTablesOf(db);
  expect(tables).toContain('read.oan_event');
  await waitQuiet(db, tables);
  // Every running replica: a standing-by one would take the partitions over and write during the replay.
  const projectors = fleet.replicasOf('projector').filter((name) => fleet.running.has(name));
  for (const name of projectors) await fleet.kill(name);
  const before = await dumpTables(db, tables);
  execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...fleet.env },
    stdio: 'pipe',
  });
  const after = await dumpTables(db, tables);
  for (const t of tables) expect(after[t], t).toEqual(before[t]);
  for (const name of projectors) await fleet.restart(name);
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
