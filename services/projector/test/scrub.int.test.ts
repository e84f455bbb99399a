import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import {
  createKafka,
  SCHEMAS_DIR,
  SchemaRegistry,
  silentLogger,
  toKafkaMessage,
  type KafkaHandle,
} from '@oan/kafka';
import { createLogger } from '@oan/http';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { ensureInfra, waitFor } from '@oan/testing';
import { loadProjectorConfig, topicNames, type ProjectorConfig } from '../src/config.ts';
import { toNotification, type Notification } from '../src/notifications.ts';
import { startPipeline } from '../src/pipeline.ts';
import { runReplay } from '../src/replayRun.ts';
import { writeEnvelopes } from '../src/stages/oan.ts';

/**
 * A retraction scrubs, in stage 2, the `relay_message` rows that carried its message's content (the
 * message's own and every correction's), and a replay of the topics rewrites them to the same bytes.
 */

const id = randomBytes(4).toString('hex');
let cfg: ProjectorConfig;
let orm: MikroORM;
let kafka: KafkaHandle;
let redis: Redis;
const registry = new SchemaRegistry(SCHEMAS_DIR);

beforeAll(async () => {
  ensureInfra();
  cfg = loadProjectorConfig({
    JWT_SECRET: 'x'.repeat(32),
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_t_${id}`,
    TOPIC_PREFIX: `t${id}.`,
    REDIS_PREFIX: `oan:t${id}:`,
    LOG_LEVEL: 'warn',
  });
  orm = await openDatabase({ url: cfg.DATABASE_URL, schema: 'projector', migrations });
  kafka = createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: 'projector-scrub-test', logger: silentLogger });
  const t = topicNames(cfg);
  await kafka.ensureTopics([...t.domain, t.oan].map((topic) => ({ topic, numPartitions: 3 })));
  redis = new Redis(cfg.REDIS_URL);
});
afterAll(async () => {
  const t = topicNames(cfg);
  await kafka.deleteTopics([...t.domain, t.oan]);
  const admin = await kafka.admin();
  await admin.deleteGroups([t.domainGroup, t.oanGroup]).catch(() => undefined);
  await kafka.close();
  const keys = await redis.keys(`${cfg.REDIS_PREFIX}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await orm.close(true);
  await dropDatabase(cfg.DATABASE_URL);
});

const T = (s: number) => `2026-11-29T08:00:${String(s).padStart(2, '0')}.000Z`;

/** A relay_message as the conversations projection shapes it, to `recipient`. */
const relay = (recipient: string, payload: Record<string, unknown>): Notification =>
  toNotification(randomUUID(), {
    recipient,
    type: 'relay_message',
    source: 'counterpart_party',
    conversationId: 'conv-1',
    reply: '/conversations/conv-1/messages',
    payload,
    createdAt: String(payload.createdAt),
  });
const original = (to: string, messageId: string, content: string) =>
  relay(to, {
    messageId,
    content,
    createdAt: T(1),
    attachments: [
      { attachmentId: 'f1', kind: 'document', name: 'cv.pdf', mimeType: 'application/pdf', size: 3 },
    ],
  });
const correction = (to: string, messageId: string, n: number, content: string) =>
  relay(to, {
    messageId: `${messageId}-c${n}`,
    content: `[correction] ${content}`,
    createdAt: T(1 + n),
    revision: { messageId, action: 'correct', count: n },
  });
const retraction = (to: string, messageId: string) =>
  relay(to, {
    messageId: `${messageId}-r`,
    content: '[retracted] The other side withdrew a message.',
    createdAt: T(9),
    revision: { messageId, action: 'retract', count: 2 },
  });

const write = (batch: Notification[]) => orm.em.fork().transactional((em) => writeEnvelopes(em, batch));
const payloads = async (account: string) =>
  (
    await sql<{ envelope: string }>(
      orm.em.fork(),
      'select envelope from read.oan_event where account_id = ? order by seq',
      [account],
    )
  ).map((r) => JSON.stringify((JSON.parse(r.envelope) as { payload: unknown }).payload));
const scrubbed = (messageId: string, createdAt: string, revision?: object) =>
  JSON.stringify({ messageId, content: '', createdAt, ...(revision ? { revision } : {}) });

describe('stage 2, when a retraction comes', () => {
  it('rewrites the message’s own row and its corrections’ rows, in later batches', async () => {
    const to = `B-${randomUUID()}`;
    const other = original(to, 'm2', 'keep me');
    await write([original(to, 'm1', 'secret'), other]);
    await write([correction(to, 'm1', 1, 'secret 2'), correction(to, 'm1', 2, 'secret 3')]);
    const before = await payloads(to);
    const retract = retraction(to, 'm1');
    const out = await write([retract]);
    expect(out.map((o) => o.seq)).toEqual([5n]);
    const after = await payloads(to);
    expect(after).toEqual([
      scrubbed('m1', T(1)),
      before[1],
      scrubbed('m1-c1', T(2), { messageId: 'm1', action: 'correct', count: 1 }),
      scrubbed('m1-c2', T(3), { messageId: 'm1', action: 'correct', count: 2 }),
      JSON.stringify(JSON.parse(retract.payload)),
    ]);
    expect(after.join()).not.toContain('secret');
    // A redelivered retraction takes no seq and rewrites nothing.
    expect(await write([retract])).toEqual([]);
    expect(await payloads(to)).toEqual(after);
  });

  it('rewrites rows written in its own batch, and returns them rewritten for the push', async () => {
    const to = `B-${randomUUID()}`;
    const out = await write([
      original(to, 'm1', 'secret'),
      correction(to, 'm1', 1, 'oops'),
      retraction(to, 'm1'),
    ]);
    const rows = await sql<{ seq: string; envelope: string }>(
      orm.em.fork(),
      'select seq::text as seq, envelope from read.oan_event where account_id = ? order by seq',
      [to],
    );
    expect(out.map((o) => o.envelope)).toEqual(rows.map((r) => r.envelope));
    expect(rows.map((r) => r.envelope).join()).not.toMatch(/secret|oops|cv\.pdf/);
  });

  it('leaves another account’s rows of a message of the same id alone', async () => {
    const to = `B-${randomUUID()}`;
    const bystander = `C-${randomUUID()}`;
    await write([original(to, 'm1', 'secret'), original(bystander, 'm1', 'theirs')]);
    await write([retraction(to, 'm1')]);
    expect((await payloads(bystander)).join()).toContain('theirs');
  });
});

async function produce(events: { type: string; key: string; data: Record<string, unknown> }[]) {
  const producer = await kafka.producer();
  await producer.send({
    topic: `${cfg.TOPIC_PREFIX}conversations.events`,
    messages: events.map((e, i) =>
      toKafkaMessage(registry, {
        key: e.key,
        type: e.type,
        data: e.data,
        headers: {
          'oan-event-id': randomUUID(),
          'oan-stream-id': 'conversation-conv-p',
          'oan-stream-version': String(i + 1),
          'oan-occurred-at': T(0),
        },
      }),
    ),
  });
}

/** The pipeline's rows (the stage-2 cases above wrote theirs straight to the table, not through the log). */
const dump = async (accounts: string[]) => ({
  events: await sql<Record<string, unknown>>(
    orm.em.fork(),
    `select account_id, seq::text as seq, event_id::text as event_id, envelope, created_at::text as created_at
       from read.oan_event where account_id in (?, ?) order by account_id, seq`,
    accounts,
  ),
  messages: await sql(
    orm.em.fork(),
    `select to_jsonb(m)::text as row from read.conversation_messages m where conversation_id = 'conv-p' order by id`,
  ),
  seqs: await sql(
    orm.em.fork(),
    'select * from read.relay_message_seqs where account_id in (?, ?) order by account_id, message_id, seq',
    accounts,
  ),
});

describe('the pipeline, live and replayed', () => {
  it('scrubs the retracted message’s relays and a replay reproduces every row byte for byte', async () => {
    const a = `acc-a-${id}`;
    const b = `acc-b-${id}`;
    const conv = { conversationId: 'conv-p', senderAccountId: a, recipientAccountId: b, changeSequence: 1 };
    const pipeline = await startPipeline({
      cfg,
      orm,
      kafka,
      registry,
      redis,
      logger: createLogger('test', 'warn'),
      mode: 'live',
    });
    try {
      await produce([
        {
          type: 'ConversationOpened',
          key: a,
          data: {
            conversationId: 'conv-p',
            matchId: 'mt',
            threadId: 'th',
            accountA: a,
            goferA: 'ga',
            accountB: b,
            goferB: 'gb',
            openedAt: T(0),
          },
        },
        {
          type: 'ConversationMessageSent',
          key: a,
          data: { ...conv, messageId: 'pm1', content: 'the secret', attachments: [], createdAt: T(1) },
        },
        {
          type: 'ConversationMessageSent',
          key: a,
          data: {
            ...conv,
            messageId: 'pm2',
            content: 'stays',
            attachments: [],
            changeSequence: 2,
            createdAt: T(2),
          },
        },
        {
          type: 'ConversationMessageCorrected',
          key: a,
          data: {
            ...conv,
            messageId: 'pm1',
            revisionId: 'pr1',
            clientMessageId: 'c1',
            content: 'the secret, corrected',
            sealed: null,
            count: 1,
            correctedAt: T(3),
          },
        },
        {
          type: 'ConversationMessageRetracted',
          key: a,
          data: {
            ...conv,
            messageId: 'pm1',
            revisionId: 'pr2',
            clientMessageId: 'c2',
            count: 1,
            attachmentIds: [],
            retractedAt: T(4),
          },
        },
      ]);
      await waitFor(async () => (await payloads(b)).length === 4, {
        timeoutMs: 30_000,
        what: "b's four relays",
      });
      expect(await payloads(b)).toEqual([
        scrubbed('pm1', T(1)),
        JSON.stringify({ messageId: 'pm2', content: 'stays', createdAt: T(2) }),
        scrubbed('pr1', T(3), { messageId: 'pm1', action: 'correct', count: 1 }),
        JSON.stringify({
          messageId: 'pr2',
          content: '[retracted] The other side withdrew a message.',
          createdAt: T(4),
          revision: { messageId: 'pm1', action: 'retract', count: 1 },
        }),
      ]);
    } finally {
      await pipeline.stop();
    }
    const live = await dump([a, b]);
    expect(JSON.stringify(live.messages)).not.toContain('secret');
    // The log still holds the original: a replay writes it, then the retraction scrubs it again.
    await sql(orm.em.fork(), `update read.oan_event set envelope = 'corrupted'`);
    await runReplay(cfg);
    expect(await dump([a, b])).toEqual(live);
  });
});
