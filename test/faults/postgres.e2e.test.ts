import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadRun } from './load.ts';
import { OwnPostgres } from './postgresServer.ts';
import {
  closeScene,
  expectFailuresAre503,
  expectNothingLost,
  expectReplayRebuilds,
  openScene,
  underLoad,
  type Scene,
} from './scenario.ts';

/**
 * A PostgreSQL server of this file's own (postgresServer.ts), so crashing it disturbs no other fleet
 * on the shared one. Every store, the outboxes, the read models and the event table live on it.
 */
let pg: OwnPostgres | undefined;

/**
 * How long the server stays down: this experiment's parameter, not a wait on a condition. Long
 * enough for the outbox publisher, the projector and the reactors to meet the outage mid-work, not only the
 * request path.
 */
const OUTAGE_MS = 3000;
let scene: Scene | undefined;
/** How long processes started during the outage wait before the server comes back. */
const RESTART_WAIT_MS = 15_000;

beforeAll(async () => {
  pg = await OwnPostgres.start();
  scene = await openScene({ DATABASE_URL: pg.url(`oan_pg_${randomBytes(4).toString('hex')}`) }, [
    'pg-a',
    'pg-b',
  ]);
});
afterAll(async () => {
  await closeScene(scene);
  await pg?.stop();
});

describe('when the PostgreSQL server is killed -9 under mixed load and started again (crash recovery)', () => {
  let run: LoadRun | undefined;
  it('requests fail cleanly or succeed, and every accepted command reaches the stores, the seq table and every socket once', async () => {
    let killedAt = 0;
    run = await underLoad(
      scene!,
      'postgres-crash',
      async () => {
        await pg!.kill();
        killedAt = Date.now();
      },
      async () => {
        await new Promise((done) => setTimeout(done, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
        await pg!.up();
      },
    );
    // It was a crash: the restarted server replayed its WAL before it let anyone in.
    expect(pg!.log).toMatch(/not properly shut down; automatic recovery in progress/);
    await expectNothingLost(scene!, run);
  });

  // The database down is an unavailable dependency (libs/http isDependencyDown), never a 500.
  it('the failures while it was down are 503 with the error body', () => {
    expectFailuresAre503(run!);
  });
});

describe('when processes are started again while the server is down', () => {
  let run: LoadRun | undefined;
  it('they wait for it instead of exiting, then serve: nothing lost, every socket gets every envelope', async () => {
    const fleet = scene!.fleet;
    // The projector (database, then the broker) and gofers (database, its routes, its reactors).
    const names = ['projector', 'gofers'] as const;
    let restarts: { name: string; done: Promise<void>; settled: () => boolean }[] = [];
    let startedAt = 0;
    run = await underLoad(
      scene!,
      'processes started while postgres is down',
      async () => {
        await pg!.kill();
        startedAt = Date.now();
        restarts = names.map((name) => {
          let settled = false;
          const done = fleet.restart(name).finally(() => (settled = true));
          done.catch(() => undefined);
          return { name, done, settled: () => settled };
        });
      },
      async () => {
        // Longer than any client library's own retries: before ADR 0057 they exited at once.
        await new Promise((done) => setTimeout(done, Math.max(0, startedAt + RESTART_WAIT_MS - Date.now())));
        expect(
          restarts.filter((r) => r.settled()).map((r) => r.name),
          'a process that exited (or became ready) while the server was down',
        ).toEqual([]);
        await pg!.up();
        await Promise.all(restarts.map((r) => r.done));
      },
    );
    expect(fleet.lines.join('\n')).toMatch(/database does not answer yet; waiting for it/);
    await expectNothingLost(scene!, run);
  });

  it('the failures while it was down are 503 with the error body', () => {
    expectFailuresAre503(run!);
  });
});

describe('after the crash', () => {
  it('a replay rebuilds the same read models and event table', async () => {
    await expectReplayRebuilds(scene!.fleet);
  });
});
