import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ProcessName } from '@oan/testing';
import { refuseConnections } from './database.ts';
import type { LoadRun } from './load.ts';
import {
  closeScene,
  expectFailuresAre503,
  expectNothingLost,
  expectReplayRebuilds,
  openScene,
  underLoad,
  type Scene,
} from './scenario.ts';

/** One fleet for the whole file: two matched accounts talking, chatting with their Gofers, reading. */
let scene: Scene;

beforeAll(async () => {
  scene = await openScene({}, ['fault-a', 'fault-b']);
});
afterAll(() => closeScene(scene));

/** Each process kind once; gateway1 stands for the gateways (gateway2 keeps serving meanwhile). */
const KINDS: [string, ProcessName][] = [
  ['edge', 'edge'],
  ['auth', 'auth'],
  ['gofers', 'gofers'],
  ['matching', 'matching'],
  ['conversations', 'conversations'],
  ['projector', 'projector'],
  ['gateway', 'gateway1'],
  ['outbox', 'outbox'],
];

describe('when a process is killed -9 under mixed load and restarted', () => {
  for (const [kind, name] of KINDS)
    it(`${kind}: failures are clean, nothing is lost or doubled, every socket gets every envelope once in order`, async () => {
      const run = await underLoad(
        scene,
        kind,
        () => scene.fleet.kill(name),
        () => scene.fleet.restart(name),
      );
      await expectNothingLost(scene, run);
    });
});

describe("when the fleet's database refuses connections for a while", () => {
  let run: LoadRun | undefined;
  it('requests fail cleanly (5xx with {error, code}) and everything recovers with nothing lost', async () => {
    let restore: (() => Promise<void>) | undefined;
    run = await underLoad(
      scene,
      'postgres',
      async () => {
        restore = await refuseConnections(scene.fleet.env.DATABASE_URL!);
      },
      async () => restore!(),
    );
    await expectNothingLost(scene, run);
  });

  // A database outage is an unavailable dependency (libs/http isDependencyDown), never a 500.
  it('those failures are 503, as for any unavailable dependency', () => {
    expectFailuresAre503(run!);
  });
});

describe('after all the faults', () => {
  it('a replay rebuilds the same read models and event table', async () => {
    await expectReplayRebuilds(scene.fleet);
  });
});
