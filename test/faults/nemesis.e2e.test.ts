import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@oan/testing';
import { ok, startLoad } from './load.ts';
import { duplicateAccounts, duplicateProposals, webhookViolations } from './nemesisChecks.ts';
import { startJourneys } from './nemesisJourneys.ts';
import { runSchedule } from './nemesisRunner.ts';
import { describeStep, nemesisSchedule } from './nemesisSchedule.ts';
import { closeWorld, linkOf, openWorld, type World } from './nemesisWorld.ts';
import { expectNothingLost, expectReplayRebuilds } from './scenario.ts';

/**
 * A seeded schedule of faults over a fleet of two replicas of every kind, under mixed load: replicas
 * killed -9 and started again, paused (SIGSTOP) and continued, the file's own Kafka broker killed and
 * started again, and one process's link to Postgres, Redis or Kafka cut or slowed (linkProxy.ts).
 * The schedule is a pure function of the seed and the duration: `NEMESIS_SEED=<n>` replays a run,
 * `NEMESIS_SECONDS` sets how long the faults go on (docs/faults.md).
 */
const SEED = process.env.NEMESIS_SEED ? Number(process.env.NEMESIS_SEED) : randomInt(2 ** 31);
const SECONDS = Number(process.env.NEMESIS_SECONDS ?? 45);
const TAG = `NEMESIS_SEED=${SEED} NEMESIS_SECONDS=${SECONDS}`;
const steps = nemesisSchedule(SEED, SECONDS);
console.log(`nemesis: ${TAG}, ${steps.length} faults:\n${steps.map(describeStep).join('\n')}`);

/** Every failure names the seed that replays it. */
async function seeded(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    const e = err as Error;
    const message = e.message;
    e.message = `[${TAG}] ${message}`;
    e.stack = e.stack?.replace(message, e.message);
    throw e;
  }
}

let world: World | undefined;
beforeAll(() => seeded(async () => void (world = await openWorld(steps))), 600_000);
afterAll(() => closeWorld(world), 120_000);

describe(`the nemesis (${TAG})`, () => {
  it(
    'loses and doubles nothing while the schedule kills, pauses and cuts',
    () =>
      seeded(async () => {
        const w = world!;
        const { scene } = w;
        const run = startLoad(`nemesis-${scene.fleet.id}`, scene.parties, scene.conversationId);
        const journeys = startJourneys(scene.fleet);
        const log: string[] = [];
        try {
          await waitFor(() => run.sent.filter(ok).length >= 8, {
            timeoutMs: 60_000,
            what: 'the load to flow',
          });
          await runSchedule(
            { fleet: scene.fleet, kafka: w.kafka, link: (name, dep) => linkOf(w, name, dep) },
            steps,
            log,
          );
          const after = run.sent.filter(ok).length;
          await waitFor(() => run.sent.filter(ok).length >= after + 8, {
            timeoutMs: 90_000,
            what: 'the load to flow again after the last fault',
          });
        } finally {
          await run.stop();
          await journeys.stop();
          scene.report.push(`faults as they ran:\n${log.join('\n')}`);
          scene.report.push(
            `load: ${run.sent.filter(ok).length}/${run.sent.length} writes 2xx, ${run.reads.length} reads; ` +
              `journeys: ${journeys.matched} matched, ${journeys.joined} joined, ${journeys.failed.length} stopped by a fault` +
              (journeys.failed.length ? `\n  ${journeys.failed.slice(0, 10).join('\n  ')}` : ''),
          );
        }
        // A link no connection went through would make its faults no-ops: each one carried the process's traffic.
        const idle = [...w.links].filter(([, link]) => link.connections === 0).map(([key]) => key);
        expect(idle, 'links without a connection').toEqual([]);
        await expectNothingLost(scene, run);
        const db = scene.fleet.env.DATABASE_URL!;
        expect(await duplicateProposals(db), 'discovery proposals').toEqual([]);
        expect(await duplicateAccounts(db), 'accounts').toEqual([]);
        const b = scene.parties[1]!;
        expect(
          await webhookViolations(db, w.receiver, { ...w.hook, accountId: b.userId }),
          'webhook',
        ).toEqual([]);
      }),
    (SECONDS + 600) * 1000,
  );

  it(
    'a replay rebuilds the same read models and event table afterwards',
    () => seeded(() => expectReplayRebuilds(world!.scene.fleet)),
    300_000,
  );
});
