import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKafka,
  SCHEMAS_DIR,
  SchemaRegistry,
  silentLogger,
  toKafkaMessage,
  type KafkaHandle,
} from '@oan/kafka';
import { joinAccount, REPO_ROOT, TestConnector, TestFleet, waitFor, type JoinedAccount } from '@oan/testing';
import type { OanEventEnvelope } from '@oan/protocol';
import { dumpEventTable } from './support.ts';

let fleet: TestFleet;
let kafka: KafkaHandle;
const registry = new SchemaRegistry(SCHEMAS_DIR);
const BURST = 1000;

beforeAll(async () => {
  fleet = await TestFleet.start();
  kafka = createKafka({
    brokers: fleet.env.KAFKA_BROKERS!.split(','),
    clientId: 'e2e-crash',
    logger: silentLogger,
  });
});
afterAll(async () => {
  await kafka?.close();
  await fleet?.stop();
});

/** Domain events straight into auth.events through the log library: a test-only shortcut, faster than commands. */
async function burst(accounts: JoinedAccount[], n: number, onProgress: (sent: number) => Promise<void>) {
  const producer = await kafka.producer();
  const topic = `${fleet.env.TOPIC_PREFIX}auth.events`;
  for (let sent = 0; sent < n; sent += 50) {
    const messages = Array.from({ length: 50 }, (_, i) => {
      const acc = accounts[(sent + i) % accounts.length]!;
      return toKafkaMessage(registry, {
        key: acc.userId,
        type: 'ConnectorOutdatedNoticed',
        data: {
          accountId: acc.userId,
          connector: '@openagentnetwork/dsh-plugin',
          installed: `0.0.${sent + i}`,
          latest: '0.1.5',
          noticedAt: new Date().toISOString(),
        },
        headers: {
          'oan-event-id': randomUUID(),
          'oan-stream-id': `burst-${acc.userId}`,
          'oan-occurred-at': new Date().toISOString(),
        },
      });
    });
    await producer.send({ topic, acks: -1, messages });
    await onProgress(sent + 50);
  }
}

const seqs = (es: OanEventEnvelope[]) => es.map((e) => Number(e.seq));

describe('when the projector and a gateway are killed in the middle of a burst', () => {
  it(
    'every connector still gets every envelope once, in seq order, and GET /events holds them all',
    { timeout: 240_000 },
    async () => {
      const accounts = await Promise.all(
        [0, 1].map((i) => joinAccount(fleet.url, fleet.mailbox, `burst${i}-${fleet.id}@example.com`)),
      );
      // Two connectors per account through the edge (round robin spreads them over both gateways).
      const connectors = accounts.flatMap((a) =>
        [0, 1].map(() => new TestConnector({ baseUrl: fleet.url, token: a.apiKey })),
      );
      for (const c of connectors) await c.connect();

      await burst(accounts, BURST, async (sent) => {
        if (sent === 300) await fleet.kill('projector');
        if (sent === 450) await fleet.restart('projector');
        if (sent === 600) await fleet.kill('gateway1');
        if (sent === 750) await fleet.restart('gateway1');
      });

      const perAccount = BURST / accounts.length;
      await waitFor(() => connectors.every((c) => c.delivered.length >= perAccount), {
        timeoutMs: 90_000,
        what: `every connector to receive the burst`,
      }).catch((err: Error) => {
        const state = connectors.map(
          (c) =>
            `${c.delivered.length} delivered, ${c.pushes.length} pushed, disconnects ${c.disconnects.join('/')}`,
        );
        throw new Error(`${err.message}\n${state.join('\n')}`);
      });
      for (const c of connectors) {
        await c.idle();
        expect(seqs(c.delivered)).toEqual(Array.from({ length: perAccount }, (_, i) => i + 1));
        expect(new Set(c.delivered.map((e) => e.eventId)).size).toBe(perAccount);
      }
      for (const [i, a] of accounts.entries()) {
        const rest = connectors[i * 2]!;
        const all: OanEventEnvelope[] = [];
        for (let since = 0; ;) {
          const page = await rest.rest<OanEventEnvelope[]>('GET', `/events?since=${since}&limit=200`);
          all.push(...page.body);
          if (page.body.length < 200) break;
          since = Number(page.body[page.body.length - 1]!.seq);
        }
        expect(all).toEqual(connectors[i * 2]!.delivered);
        expect(all).toEqual(connectors[i * 2 + 1]!.delivered);
        expect(all.every((e) => e.type === 'system_notice')).toBe(true);
        void a;
      }
      for (const c of connectors) c.close();
    },
  );

  it('replay on the projector reproduces the oan_event table byte for byte', async () => {
    const before = await dumpEventTable(fleet.env.DATABASE_URL!);
    expect(before.length).toBeGreaterThanOrEqual(BURST);
    await fleet.kill('projector');
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    const after = await dumpEventTable(fleet.env.DATABASE_URL!);
    expect(after).toEqual(before);
    await fleet.restart('projector');
  });
});
