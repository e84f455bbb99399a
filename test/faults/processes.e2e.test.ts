import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, TestFleet, type ProcessName } from '@oan/testing';
import { dumpTables, matchTwoAccounts } from '../support';
import { READ_TABLES, refuseConnections, waitQuiet } from './database';
import type { LoadRun } from './load';
import { openParty } from './parties';
import { expectNothingLost, underLoad, type Scene } from './scenario';

/** One fleet for the whole file: two matched accounts talking, chatting with their Gofers, reading. */
let scene: Scene;

beforeAll(async () => {
  const fleet = await TestFleet.start();
  scene = { fleet, parties: [], report: [] };
  const m = await matchTwoAccounts(fleet, ['fault-a', 'fault-b']);
  m.ca.close();
  m.cb.close();
  scene.conversationId = m.conversationId;
  scene.parties = [await openParty(fleet.url, 'a', m.a, m.ga), await openParty(fleet.url, 'b', m.b, m.gb)];
});
afterAll(async () => {
  for (const p of scene?.parties ?? []) for (const c of p.connectors) c.close();
  if (scene?.report.length) console.log(`faults:\n${scene.report.join('\n')}`);
  await scene?.fleet.stop();
});

/** Each process kind once; gateway1 stands for the gateways (gateway2 keeps serving meanwhile). */
const KINDS: [string, ProcessName][] = [
  ['edge', 'edge'],
  ['auth', 'auth'],
  ['gofers', 'gofers'],
  ['matching', 'matching'],
  ['conversations', 'conversations'],
  ['projector', 'projector'],
  ['gateway', 'gateway1'],
  ['relay', 'relay'],
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
    const failed = [...run!.sent.map((s) => s.outcome), ...run!.reads].filter(
      (o) => typeof o.status === 'number' && o.status >= 500,
    );
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.map((o) => o.status)).toEqual(failed.map(() => 503));
  });
});

describe('after all the faults', () => {
  it('a replay rebuilds the same read models and event table', async () => {
    const db = scene.fleet.env.DATABASE_URL!;
    await waitQuiet(db, READ_TABLES);
    await scene.fleet.kill('projector');
    const before = await dumpTables(db, READ_TABLES);
    execFileSync(process.execPath, ['--import', 'tsx', 'services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...scene.fleet.env },
      stdio: 'pipe',
    });
    const after = await dumpTables(db, READ_TABLES);
    for (const t of READ_TABLES) expect(after[t], t).toEqual(before[t]);
    await scene.fleet.restart('projector');
  });
});
