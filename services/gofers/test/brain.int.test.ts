import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, sql, type MikroORM } from '@oan/db';
import { domainHeaders, startOutboxPublisher, type OutboxPublisher } from '@oan/eventstore';
import {
  createKafka,
  SCHEMAS_DIR,
  SchemaRegistry,
  silentLogger,
  type KafkaHandle,
  type LogSink,
} from '@oan/kafka';
import { WriteTracker } from '@oan/projection';
import { ensureInfra, waitFor } from '@oan/testing';
import { ScriptedBrain, type BrainInput, type BrainProvider } from '../src/brain/index.ts';
import type { GoferContext } from '../src/commands/context.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { deleteGofer } from '../src/commands/deleteGofer.ts';
import { postUserMessage } from '../src/commands/postUserMessage.ts';
import { createGoferStore } from '../src/infra/store.ts';
import { openGofersDatabase } from './helpers.ts';
import { startBrain, type RunningBrain } from '../src/reactors/brain.ts';

const id = randomBytes(4).toString('hex');
const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${id}`;
const topicPrefix = `t${id}.`;
const topic = `${topicPrefix}gofers.events`;
const groupId = `${topicPrefix}gofers.brain`;
const registry = new SchemaRegistry(SCHEMAS_DIR);
const store = createGoferStore();
let orm: MikroORM;
let redis: Redis;
let kafka: KafkaHandle;
let outbox: OutboxPublisher;
let ctx: GoferContext;
const logLines: string[] = [];
const logger: LogSink = {
  debug: () => undefined,
  info: () => undefined,
  warn: (o, m) => logLines.push(JSON.stringify({ ...o, m })),
  error: (o, m) => logLines.push(JSON.stringify({ ...o, m })),
};

beforeAll(async () => {
  ensureInfra();
  // createGofer reads the registration platform from the projector's table or auth's credential view.
  orm = await openGofersDatabase(dbUrl, store);
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  ctx = {
    orm,
    store,
    writes: new WriteTracker(redis, `oan:t${id}:`),
    now: () => new Date(),
    ids: randomUUID,
  };
  kafka = createKafka({ brokers: ['127.0.0.1:9092'], clientId: `brain-test-${id}`, logger: silentLogger });
  // Several partitions: the accounts' Gofers are spread out and consumed concurrently.
  await kafka.ensureTopics([{ topic, numPartitions: 3 }]);
  const producer = await kafka.producer({ idempotent: true });
  // As services/outbox publishes every outbox.
  outbox = await startOutboxPublisher({
    databaseUrl: dbUrl,
    schema: 'gofers',
    logger: silentLogger,
    idleMs: 50,
    encode: (e) => {
      const { value, headers } = registry.encode(e.type, e.data, e.version);
      return { key: e.partitionKey, value, headers: { ...domainHeaders(e), ...headers } };
    },
    publish: async (messages) => {
      await producer.send({ topic, acks: -1, messages });
    },
  });
});

afterAll(async () => {
  await outbox?.stop();
  await kafka?.deleteTopics([topic]);
  await (await kafka?.admin())?.deleteGroups([groupId]).catch(() => undefined);
  await kafka?.close();
  const keys = await redis.keys(`oan:t${id}:*`);
  if (keys.length) await redis.del(...keys);
  redis?.disconnect();
  await orm?.close(true);
  await dropDatabase(dbUrl);
});

const account = () => `acc-${randomUUID()}`;

/** user message id → the number of assistant turns that answer it. */
async function repliesByMessage(): Promise<Map<string, number>> {
  const rows = await sql<{ id: string; role: string; reply_to: string | null }>(
    orm.em.fork(),
    `select data->>'messageId' as id, data->>'role' as role, data->>'replyTo' as reply_to
       from gofers.events where type = 'ChatMessageAdded' order by position`,
  );
  const counts = new Map<string, number>();
  for (const r of rows) if (r.role === 'user') counts.set(r.id, 0);
  for (const r of rows) if (r.reply_to) counts.set(r.reply_to, (counts.get(r.reply_to) ?? 0) + 1);
  return counts;
}

async function assistantTurns(goferId: string) {
  return sql<{ content: string; reply_to: string | null; pending: boolean }>(
    orm.em.fork(),
    `select data->>'content' as content, data->>'replyTo' as reply_to, (data->>'pendingQuery')::boolean as pending
       from gofers.events where stream_id = ? and type = 'ChatMessageAdded' and data->>'role' = 'assistant'
      order by position`,
    [`gofer-${goferId}`],
  );
}

/** Until the brain's group committed everything on the topic: nothing is left to (re)deliver. */
async function caughtUp(): Promise<void> {
  const admin = await kafka.admin();
  await waitFor(
    async () => {
      if ((await outbox.backlog()) > 0) return false;
      const ends = await admin.fetchTopicOffsets(topic);
      const [group] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const committed = (partition: number) =>
        group!.partitions.find((p) => p.partition === partition)?.offset;
      // A partition nobody wrote to has nothing to commit (-1).
      return ends.every((e) => e.high === '0' || committed(e.partition) === e.high);
    },
    { timeoutMs: 30_000, what: 'the brain group to commit the whole topic' },
  );
}

/** The scripted brain, slowed down so a stop lands while messages are still waiting. */
const slowScripted = (ms: number): BrainProvider => {
  const inner = new ScriptedBrain();
  return {
    kind: 'scripted',
    reply: async (i) => new Promise((r) => setTimeout(r, ms)).then(() => inner.reply(i)),
  };
};

const run = (provider: BrainProvider, extra: { maxAttempts?: number; backoffMs?: number } = {}) =>
  startBrain({ kafka, registry, orm, ctx, provider, logger, topicPrefix, ...extra });

describe('given owners posting to their Gofers', () => {
  it('then each user message gets exactly one reply, across a restart mid-way and a full redelivery', async () => {
    const gofers = await Promise.all(
      [0, 1, 2, 3].map(() => createGofer(ctx, { accountId: account(), locale: 'en' }).then((g) => g.goferId)),
    );
    const owners = new Map<string, string>();
    for (const goferId of gofers) {
      const [row] = await sql<{ account_id: string }>(
        orm.em.fork(),
        'select account_id from gofers.events where stream_id = ? limit 1',
        [`gofer-${goferId}`],
      );
      owners.set(goferId, row!.account_id);
    }
    const post = (goferId: string, content: string) =>
      postUserMessage(ctx, { accountId: owners.get(goferId)!, goferId, content, attachmentsEnabled: false });
    const script = ['Find me a backend engineer', 'I run a small fintech team', 'honesty, focus'];
    for (const goferId of gofers) for (const content of script) await post(goferId, content);

    let brain: RunningBrain = await run(slowScripted(150));
    await waitFor(async () => [...(await repliesByMessage()).values()].some((n) => n > 0), {
      timeoutMs: 30_000,
    });
    await brain.stop();
    const partial = await repliesByMessage();
    expect([...partial.values()].filter((n) => n === 0).length).toBeGreaterThan(0);

    brain = await run(slowScripted(20));
    await caughtUp();
    await brain.stop();
    expect([...(await repliesByMessage()).values()]).toEqual(Array(12).fill(1));

    // A replayed topic (group reset to the beginning) asks every message again: nothing is doubled.
    const admin = await kafka.admin();
    await admin.resetOffsets({ groupId, topic, earliest: true });
    brain = await run(new ScriptedBrain());
    await caughtUp();
    await brain.stop();
    expect([...(await repliesByMessage()).values()]).toEqual(Array(12).fill(1));

    // One Gofer's messages were answered in order: greeting, then the interview's steps.
    for (const goferId of gofers) {
      const turns = await assistantTurns(goferId);
      expect(turns.map((t) => t.pending)).toEqual([false, false, false, true]);
      expect(turns[3]!.content).toContain('Shall I start looking for matches?');
    }
  });

  it('then a Gofer deleted before its message was answered gets no reply', async () => {
    const accountId = account();
    const { goferId } = await createGofer(ctx, { accountId, locale: 'en' });
    const { messageId } = await postUserMessage(ctx, {
      accountId,
      goferId,
      content: 'Find me a tutor',
      attachmentsEnabled: false,
    });
    await deleteGofer(ctx, { accountId, goferId });
    const brain = await run(new ScriptedBrain());
    await caughtUp();
    await brain.stop();
    expect((await repliesByMessage()).get(messageId)).toBe(0);
  });
});

describe('given a provider that always fails', () => {
  it('then nothing is appended, the failure is counted and logged without content, and the brain moves on', async () => {
    const failuresMetric = () =>
      (client.register.getSingleMetric('oan_brain_generation_failures_total') as client.Counter | undefined)
        ?.get()
        .then((m) => m.values.find((v) => v.labels.provider === 'broken')?.value ?? 0) ?? Promise.resolve(0);
    const before = await failuresMetric();
    const calls: BrainInput[] = [];
    const broken: BrainProvider = {
      kind: 'broken',
      reply: async (input) => {
        calls.push(input);
        throw new Error(`upstream said no to ${input.message.content}`);
      },
    };
    const accountId = account();
    const { goferId } = await createGofer(ctx, { accountId, locale: 'en' });
    const secret = `SECRET-${randomUUID()}`;
    const { messageId } = await postUserMessage(ctx, {
      accountId,
      goferId,
      content: secret,
      attachmentsEnabled: false,
    });

    const brain = await run(broken, { maxAttempts: 3, backoffMs: 10 });
    await caughtUp();
    await brain.stop();

    expect(calls.map((c) => c.message.messageId)).toEqual([messageId, messageId, messageId]);
    expect((await repliesByMessage()).get(messageId)).toBe(0);
    expect(await assistantTurns(goferId)).toHaveLength(1); // the greeting only
    expect((await failuresMetric()) - before).toBe(1);
    expect(logLines.some((l) => l.includes(messageId) && l.includes('gave up'))).toBe(true);
    expect(logLines.filter((l) => l.includes(secret))).toEqual([]);
  });
});
