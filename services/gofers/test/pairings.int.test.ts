import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, sql, type MikroORM } from '@oan/db';
import {
  createKafka,
  SCHEMAS_DIR,
  SchemaRegistry,
  silentLogger,
  toKafkaMessage,
  type KafkaHandle,
  type Producer,
} from '@oan/kafka';
import { WriteTracker } from '@oan/projection';
import { ensureInfra, waitFor } from '@oan/testing';
import type { GoferContext } from '../src/commands/context.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { deleteGofer } from '../src/commands/deleteGofer.ts';
import { pairingMessageIdFor } from '../src/domain/pairing.ts';
import { createGoferStore } from '../src/infra/store.ts';
import { openGofersDatabase } from './helpers.ts';
import { startPairings, type RunningPairings } from '../src/reactors/pairings.ts';

const id = randomBytes(4).toString('hex');
const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${id}`;
const topicPrefix = `t${id}.`;
const topic = `${topicPrefix}matching.events`;
const registry = new SchemaRegistry(SCHEMAS_DIR);
const store = createGoferStore();
let orm: MikroORM;
let redis: Redis;
let kafka: KafkaHandle;
let producer: Producer;
let ctx: GoferContext;
let reactor: RunningPairings;

beforeAll(async () => {
  ensureInfra();
  orm = await openGofersDatabase(dbUrl, store);
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  ctx = {
    orm,
    store,
    writes: new WriteTracker(redis, `oan:t${id}:`),
    now: () => new Date(),
    ids: randomUUID,
  };
  kafka = createKafka({ brokers: ['127.0.0.1:9092'], clientId: `pairings-${id}`, logger: silentLogger });
  await kafka.ensureTopics([{ topic, numPartitions: 2 }]);
  producer = await kafka.producer({ idempotent: true });
  reactor = await startPairings({ kafka, registry, ctx, logger: silentLogger, topicPrefix });
});

afterAll(async () => {
  await reactor?.stop();
  await kafka?.deleteTopics([topic]);
  await (await kafka?.admin())?.deleteGroups([`${topicPrefix}gofers.pairings`]).catch(() => undefined);
  await kafka?.close();
  const keys = await redis.keys(`oan:t${id}:*`);
  if (keys.length) await redis.del(...keys);
  redis?.disconnect();
  await orm?.close(true);
  await dropDatabase(dbUrl);
});

interface Side {
  goferId: string;
  accountId: string;
  name: string;
  sourcePlatform: string;
}

async function side(name: string, locale = 'en'): Promise<Side> {
  const accountId = `acc-${randomUUID()}`;
  const { goferId } = await createGofer(ctx, { accountId, locale });
  return { goferId, accountId, name, sourcePlatform: 'dsh' };
}

/** As matching's outbox publisher publishes a proposal (keyed by side a's account). */
async function propose(a: Side, b: Side, times = 1) {
  const threadId = randomUUID();
  const data = { threadId, mode: 'confirm', a, b, score: 0.5, proposedAt: new Date().toISOString() };
  for (let i = 0; i < times; i++)
    await producer.send({
      topic,
      acks: -1,
      messages: [toKafkaMessage(registry, { key: a.accountId, type: 'ThreadProposed', data })],
    });
  return threadId;
}

const pairingRows = (goferId: string) =>
  sql<{ id: string; role: string; kind: string | null; pairing: string | null; content: string }>(
    orm.em.fork(),
    `select data->>'messageId' as id, data->>'role' as role, data->>'kind' as kind,
            data->>'pairing' as pairing, data->>'content' as content
       from gofers.events where stream_id = ? and type = 'ChatMessageAdded' and data->>'kind' = 'pairing'`,
    [`gofer-${goferId}`],
  );

describe('pairing announcements', () => {
  it('adds one system pairing row to each side’s role-chat, even when the proposal is redelivered', async () => {
    const [a, b] = await Promise.all([side('Acme Hiring'), side('林', 'zh-CN')]);
    const threadId = await propose(a, b, 2);
    await waitFor(
      async () => (await pairingRows(a.goferId)).length > 0 && (await pairingRows(b.goferId)).length > 0,
      {
        timeoutMs: 30_000,
        what: 'both announcements',
      },
    );
    // Let the duplicate be consumed too.
    await propose(a, b);
    await waitFor(async () => (await pairingRows(a.goferId)).length === 2, {
      timeoutMs: 30_000,
      what: 'the probe',
    });
    const rowsA = (await pairingRows(a.goferId)).filter(
      (r) => r.id === pairingMessageIdFor(threadId, a.goferId),
    );
    const rowsB = await pairingRows(b.goferId);
    expect(rowsA).toHaveLength(1);
    expect(rowsB.filter((r) => r.id === pairingMessageIdFor(threadId, b.goferId))).toHaveLength(1);
    expect(rowsA[0]!.role).toBe('system');
    expect(JSON.parse(rowsA[0]!.pairing!)).toEqual({
      threadId,
      self: { roleId: a.goferId, name: a.name },
      counterpart: { roleId: b.goferId, name: b.name },
    });
    expect(JSON.parse(rowsB[0]!.pairing!)).toEqual({
      threadId,
      self: { roleId: b.goferId, name: b.name },
      counterpart: { roleId: a.goferId, name: a.name },
    });
    expect(rowsA[0]!.content).toBe('You have been paired with “林”.');
    expect(rowsB[0]!.content).toBe('已与“Acme Hiring”配对。');
  });

  it('skips a deleted Gofer and still announces to its counterpart', async () => {
    const [a, b] = await Promise.all([side('A'), side('B')]);
    await deleteGofer(ctx, { accountId: b.accountId, goferId: b.goferId });
    const before = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from gofers.events where stream_id = ?',
      [`gofer-${b.goferId}`],
    );
    await propose(a, b);
    await waitFor(async () => (await pairingRows(a.goferId)).length === 1, {
      timeoutMs: 30_000,
      what: 'A’s row',
    });
    const after = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from gofers.events where stream_id = ?',
      [`gofer-${b.goferId}`],
    );
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});
