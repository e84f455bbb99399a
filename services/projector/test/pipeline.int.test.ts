import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { createLogger } from '@oan/http';
import {
  createKafka,
  SCHEMAS_DIR,
  SchemaRegistry,
  silentLogger,
  toKafkaMessage,
  type KafkaHandle,
} from '@oan/kafka';
import { ensureInfra, waitFor } from '@oan/testing';
import { loadProjectorConfig, topicNames, type ProjectorConfig } from '../src/config.ts';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { startPipeline, type Pipeline } from '../src/pipeline.ts';
import { runReplay } from '../src/replayRun.ts';

const id = randomBytes(4).toString('hex');
let cfg: ProjectorConfig;
let orm: MikroORM;
let kafka: KafkaHandle;
let redis: Redis;
const registry = new SchemaRegistry(SCHEMAS_DIR);
const logger = createLogger('test', 'warn');

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
  kafka = createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: 'projector-test', logger: silentLogger });
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

async function produceDomain(
  events: { type: string; accountId: string; data: Record<string, unknown>; eventId?: string }[],
) {
  const producer = await kafka.producer();
  const t = topicNames(cfg);
  await producer.send({
    topic: t.domain[0]!,
    messages: events.map((e, i) =>
      toKafkaMessage(registry, {
        key: e.accountId,
        type: e.type,
        data: e.data,
        headers: {
          'oan-event-id': e.eventId ?? randomUUID(),
          'oan-stream-id': `account-${e.accountId}`,
          'oan-stream-version': String(i + 1),
          'oan-occurred-at': '2026-11-29T08:00:00.000Z',
        },
      }),
    ),
  });
}

const dump = async () =>
  sql<{ account_id: string; seq: string; event_id: string; envelope: string }>(
    orm.em.fork(),
    'select account_id, seq::text as seq, event_id::text as event_id, envelope from read.oan_event order by account_id, seq',
  );

describe('the projector pipeline', () => {
  let pipeline: Pipeline | undefined;
  afterAll(async () => {
    await pipeline?.stop();
  });
  const accounts = Array.from({ length: 20 }, () => randomUUID());

  it('turns domain events into envelopes with dense per-account seqs, pushed after commit', async () => {
    pipeline = await startPipeline({ cfg, orm, kafka, registry, redis, logger, mode: 'live' });
    type Ev = { type: string; accountId: string; data: Record<string, unknown>; eventId?: string };
    const events: Ev[] = accounts.flatMap((a): Ev[] => [
      {
        type: 'AccountRegistered',
        accountId: a,
        data: {
          accountId: a,
          realm: 'oan',
          email: `${a}@x.io`,
          googleSub: null,
          sourcePlatform: 'dsh',
          method: 'email',
          registeredAt: '2026-11-29T08:00:00.000Z',
        },
      },
      {
        type: 'ConnectorOutdatedNoticed',
        accountId: a,
        data: {
          accountId: a,
          connector: '@openagentnetwork/dsh-plugin',
          installed: '0.1.4',
          latest: '0.1.5',
          noticedAt: '2026-11-29T08:00:00.000Z',
        },
      },
      {
        type: 'AccountBanned',
        accountId: a,
        data: { accountId: a, reason: null, bannedAt: '2026-11-29T08:00:00.000Z' },
      },
    ]);
    // The same ban delivered twice (an at-least-once redelivery) yields one envelope.
    const dupId = randomUUID();
    events.push({
      type: 'AccountBanned',
      accountId: accounts[0]!,
      eventId: dupId,
      data: { accountId: accounts[0]!, reason: null, bannedAt: '2026-11-29T08:00:00.000Z' },
    });
    events.push({
      type: 'AccountBanned',
      accountId: accounts[0]!,
      eventId: dupId,
      data: { accountId: accounts[0]!, reason: null, bannedAt: '2026-11-29T08:00:00.000Z' },
    });
    await produceDomain(events);
    await waitFor(async () => (await dump()).length === accounts.length * 2 + 1, {
      timeoutMs: 30_000,
      what: 'all envelopes',
    });
    const rows = await dump();
    for (const a of accounts) {
      const mine = rows.filter((r) => r.account_id === a);
      expect(mine.map((r) => r.seq)).toEqual(a === accounts[0] ? ['1', '2', '3'] : ['1', '2']);
      const kinds = mine.map((r) => (JSON.parse(r.envelope) as { payload: { kind: string } }).payload.kind);
      expect(kinds.slice(0, 2)).toEqual(['connector_outdated', 'account_banned']);
    }
    const pushed = await waitFor(
      async () => {
        const entries = await redis.xrange(`${cfg.REDIS_PREFIX}push`, '-', '+');
        return entries.length === rows.length ? entries : undefined;
      },
      { what: 'push stream entries' },
    );
    const envs = new Set(pushed.map(([, f]) => f[f.indexOf('e') + 1]));
    for (const r of rows) expect(envs.has(r.envelope)).toBe(true);
    // Read-your-writes waits for each recipient's last notification, placed in its partition of oan.events.
    const expected = await sql<{ account_id: string; event_id: string; kafka_offset: string | null }>(
      orm.em.fork(),
      'select account_id, event_id::text as event_id, kafka_offset::text as kafka_offset from read.oan_expected',
    );
    for (const a of accounts) {
      const row = expected.find((x) => x.account_id === a);
      expect(row?.event_id).toBe(rows.filter((r) => r.account_id === a).at(-1)?.event_id);
      expect(row?.kafka_offset).toMatch(/^\d+$/);
    }
    await pipeline.stop();
    pipeline = undefined;
  });

  it('replay rebuilds the oan_event table byte for byte', async () => {
    const before = await dump();
    await sql(orm.em.fork(), 'update read.oan_event set envelope = ? where seq = 1', ['corrupted']);
    const progress: number[] = [];
    const { records } = await runReplay(cfg, (p) => progress.push(p.done));
    expect(records).toBeGreaterThan(0);
    expect(progress[progress.length - 1]).toBe(records);
    const after = await dump();
    expect(after).toEqual(before);
  });
});
