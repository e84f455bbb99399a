import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@oan/testing';
import { OwnRedis } from './redisServer.ts';
import {
  closeScene,
  expectNothingLost,
  expectReplayRebuilds,
  openScene,
  underLoad,
  type Scene,
} from './scenario.ts';

/**
 * How long the server stays down. An outage is this experiment's parameter, not a wait on a
 * condition: long enough for requests to meet it and publishes to be lost, shorter than the services'
 * ioredis retry budget (20 retries, about 10 s), after which a queued command fails.
 */
const OUTAGE_MS = 4000;

/**
 * Both gateways read the push stream of the server as it is now, past its newest entry: a probe
 * entry that the tails skip as malformed (libs/projection/src/pushTail.ts logs its id) shows
 * up in each gateway's log. Deterministic, unlike timing a delivery against the 2 s sweep.
 */
async function expectTailsRead(scene: Scene, redis: OwnRedis): Promise<void> {
  const probe = await redis.cli('XADD', `${scene.fleet.env.REDIS_PREFIX}push`, '*', 't', 'probe');
  const logged = (name: string) =>
    readFileSync(join(scene.fleet.logDir, `${name}.log`), 'utf8')
      .split('\n')
      .some((line) => line.includes(probe) && line.includes('malformed push entry'));
  await waitFor(() => logged('gateway1') && logged('gateway2'), {
    timeoutMs: 15_000,
    intervalMs: 250,
    what: `both gateways to read push entry ${probe}`,
  });
}

/** A Redis of this file's own (redisServer.ts), so killing it disturbs no other fleet on the shared one. */
let redis: OwnRedis | undefined;
let scene: Scene | undefined;

beforeAll(async () => {
  redis = await OwnRedis.start();
  scene = await openScene({ REDIS_URL: redis.url }, ['redis-a', 'redis-b']);
});
afterAll(async () => {
  await closeScene(scene);
  await redis?.stop();
});

describe('when Redis is killed -9 under mixed load and comes back empty', () => {
  it('requests fail cleanly or succeed, and every accepted command reaches the stores, the seq table and every socket once', async () => {
    const s = scene!;
    const r = redis!;
    await expectTailsRead(s, r);
    let killedAt = 0;
    const run = await underLoad(
      s,
      'redis',
      async () => {
        await r.kill();
        killedAt = Date.now();
      },
      async () => {
        await new Promise((done) => setTimeout(done, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
        await r.up();
      },
    );
    await expectNothingLost(s, run);
    // The emptied server holds the push stream again (the projector published to it after the
    // restart), and both gateways tail it: live delivery resumed, not only the sweep.
    const published = Number(await r.cli('XLEN', `${s.fleet.env.REDIS_PREFIX}push`));
    expect(published, 'push entries on the restarted server').toBeGreaterThan(0);
    await expectTailsRead(s, r);
  });
});

describe('after the Redis outage', () => {
  it('a replay rebuilds the same read models and event table', async () => {
    await expectReplayRebuilds(scene!.fleet);
  });
});
