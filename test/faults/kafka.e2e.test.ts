import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { freePort, joinAccount, REPO_ROOT, TestFleet } from '@oan/testing';
import { openParty } from './parties.ts';
import { expectNothingLost, underLoad, type Scene } from './scenario.ts';

/**
 * A broker of this file's own (infra/kafka/start.sh on free ports and its own data directory), so
 * killing it disturbs no other fleet or CI run on the shared broker.
 */
let broker: Record<string, string>;
// Asynchronous: a synchronous child would stall the load (and its timings) while the broker starts.
const kafka = async (script: 'start.sh' | 'stop.sh', ...args: string[]) => {
  await promisify(execFile)('bash', [join(REPO_ROOT, 'infra/kafka', script), ...args], {
    env: { ...process.env, ...broker },
    timeout: 90_000,
  });
};

let scene: Scene | undefined;

beforeAll(async () => {
  const [port, controller] = [await freePort(), await freePort()];
  broker = {
    KAFKA_BROKERS: `127.0.0.1:${port}`,
    KAFKA_CONTROLLER_PORT: String(controller),
    KAFKA_DATA_DIR: join(REPO_ROOT, '.tmp', 'faults-kafka', String(port)),
    KAFKA_HEAP_OPTS: '-Xms128m -Xmx384m',
  };
  await kafka('start.sh');
  const fleet = await TestFleet.start({ env: { KAFKA_BROKERS: broker.KAFKA_BROKERS! } });
  scene = { fleet, parties: [], report: [] };
  for (const name of ['k-a', 'k-b']) {
    const account = await joinAccount(fleet.url, fleet.mailbox, `${name}-${fleet.id}@example.com`);
    const party = await openParty(fleet.url, name, account, '');
    const gofer = await party.connectors[0].request<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
    if (gofer.status !== 201) throw new Error(`POST /gofers: ${gofer.status} ${gofer.text}`);
    party.goferId = gofer.body.goferId;
    scene.parties.push(party);
  }
});
afterAll(async () => {
  for (const p of scene?.parties ?? []) for (const c of p.connectors) c.close();
  if (scene?.report.length) console.log(`faults:\n${scene.report.join('\n')}`);
  await scene?.fleet.stop();
  if (broker) {
    await kafka('stop.sh', '--kill');
    rmSync(broker.KAFKA_DATA_DIR!, { recursive: true, force: true });
  }
});

describe('when the Kafka broker is killed -9 under load and started again', () => {
  it('requests fail cleanly or succeed, and every accepted command reaches the stores, the seq table and every socket once', async () => {
    const run = await underLoad(
      scene!,
      'kafka',
      () => kafka('stop.sh', '--kill'),
      () => kafka('start.sh'),
    );
    await expectNothingLost(scene!, run);
  });
});
