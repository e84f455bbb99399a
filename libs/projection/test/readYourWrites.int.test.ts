import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import {
  appliedPositionsMigration,
  awaitOwnWrites,
  oanEventMigration,
  oanExpectedMigration,
  oanExpectedPlacesMigration,
  recordProgress,
  WriteTracker,
} from '../src/index.ts';

/**
 * Stage 1 records, per recipient, the last notification it produced (`read.oan_expected`), and a
 * read with `envelopes` waits until that one is in `read.oan_event`. Two batches of different
 * partitions (two projector replicas) may produce for one recipient in one order and commit in the
 * other: the row must still name the later notification.
 */
const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
const prefix = `t${randomBytes(4).toString('hex')}:`;
let orm: MikroORM;
let redis: Redis;
let tracker: WriteTracker;

beforeAll(async () => {
  orm = await openDatabase({
    url,
    schema: 'read',
    migrations: [
      oanEventMigration,
      appliedPositionsMigration,
      oanExpectedMigration,
      oanExpectedPlacesMigration,
    ],
  });
  redis = new Redis('redis://127.0.0.1:6379/0');
  tracker = new WriteTracker(redis, prefix);
});

afterAll(async () => {
  const keys = await redis?.keys(`${prefix}*`);
  if (keys?.length) await redis.del(...keys);
  redis?.disconnect();
  await orm?.close(true);
  await dropDatabase(url);
});

/** Stage 2 wrote the notification: its envelope is in the event table. */
const written = (accountId: string, eventId: string) =>
  sql(
    orm.em.fork(),
    `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
     select ?, coalesce(max(seq), 0) + 1, ?, 'system_notice', '{}', now()
       from read.oan_event where account_id = ?`,
    [accountId, eventId, accountId],
  );

const expectedOf = async (accountId: string) =>
  (
    await sql<{ event_id: string }>(
      orm.em.fork(),
      'select event_id from read.oan_expected where account_id = ?',
      [accountId],
    )
  )[0]?.event_id;

/** A batch's commit: the position it applied for the account and the notification it produced. */
const commit = (accountId: string, position: bigint, eventId: string, offset: bigint) =>
  recordProgress(orm.em.fork(), 'gofers', new Map([[accountId, position]]), [
    { accountId, eventId, partition: 2, offset },
  ]);

/** Whether a read by `accountId` that waits for its envelopes returns within the bound. */
const readWaitsOut = async (accountId: string) =>
  !(await awaitOwnWrites(orm, tracker, accountId, ['gofers'], { timeoutMs: 300, envelopes: true }));

describe('when two batches commit in the reverse of their produce order', () => {
  it('the row keeps the later notification, and a read waits for it', async () => {
    const account = `acc-${randomUUID()}`;
    const [a, b] = [randomUUID(), randomUUID()];
    // A was produced at offset 10 of the recipient's partition, B after it at 11 (the caller's own).
    await tracker.remember(account, 'gofers', 2n);
    await commit(account, 2n, b, 11n);
    await commit(account, 1n, a, 10n);
    expect(await expectedOf(account)).toBe(b);

    // Stage 2 has written A but not yet B: the caller's read must not return early.
    await written(account, a);
    expect(await readWaitsOut(account)).toBe(true);
    await written(account, b);
    expect(await readWaitsOut(account)).toBe(false);
  });
});

describe('when batches commit in their produce order', () => {
  it('each later notification replaces the row', async () => {
    const account = `acc-${randomUUID()}`;
    const [a, b] = [randomUUID(), randomUUID()];
    await commit(account, 1n, a, 10n);
    expect(await expectedOf(account)).toBe(a);
    await commit(account, 2n, b, 11n);
    expect(await expectedOf(account)).toBe(b);
  });

  it('a notification on another partition (the topic was repartitioned) replaces the row', async () => {
    const account = `acc-${randomUUID()}`;
    const [a, b] = [randomUUID(), randomUUID()];
    await commit(account, 1n, a, 500n);
    await recordProgress(orm.em.fork(), 'gofers', new Map(), [
      { accountId: account, eventId: b, partition: 0, offset: 3n },
    ]);
    expect(await expectedOf(account)).toBe(b);
  });
});
