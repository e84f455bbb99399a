import type { Redis } from 'ioredis';
import { Migration, sql, type EntityManager, type MigrationDef, type MikroORM } from '@oan/db';

/**
 * Read-your-writes per account. A command records, per account and source event store,
 * the highest store position it appended (Redis, `WriteTracker.remember`). The projector records, in
 * the same transaction as the read-model change, the highest position it applied per account and
 * source (`recordApplied`). A read by that account first waits, bounded, until the projector caught
 * up with the account's own writes (`awaitOwnWrites`). One account's events share one partition, in
 * position order, so "applied up to position P" is a single number per (account, source).
 */
class CreateAppliedPositions extends Migration {
  override async up(): Promise<void> {
    this.addSql('create schema if not exists read');
    this.addSql(`create table if not exists read.applied_positions (
      account_id text not null, source text not null, position bigint not null,
      primary key (account_id, source))`);
  }
}
export const appliedPositionsMigration: MigrationDef = {
  name: 'read-0003-applied-positions',
  class: CreateAppliedPositions,
};

/**
 * Per recipient account, the eventId of the last OAN notification stage 1 produced for it. Stage 1
 * writes it in the transaction that records the positions applied (after the produce was acked),
 * and stage 2 writes a recipient's notifications in produce order (one partition per recipient), so
 * "that eventId is in read.oan_event" means every notification produced for the account so far is.
 * Not a read model: a replay produces nothing and leaves it alone; a stale row is satisfied.
 * Where that notification landed in `oan.events` is added by `oanExpectedPlacesMigration`.
 */
class CreateOanExpected extends Migration {
  override async up(): Promise<void> {
    this.addSql('create schema if not exists read');
    this.addSql(`create table if not exists read.oan_expected (
      account_id text primary key, event_id uuid not null)`);
  }
}
export const oanExpectedMigration: MigrationDef = {
  name: 'read-0008-oan-expected',
  class: CreateOanExpected,
};

/**
 * The partition and offset in `oan.events` of the notification `read.oan_expected` names. Two stage-1
 * batches (of two partitions, maybe on two replicas) can produce for one recipient in one order and
 * commit in the other; the offset, which orders a recipient's notifications in its one partition,
 * keeps the row on the later one whatever the commit order.
 */
class AddOanExpectedPlaces extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table read.oan_expected
      add column if not exists kafka_partition integer, add column if not exists kafka_offset bigint`);
  }
}
export const oanExpectedPlacesMigration: MigrationDef = {
  name: 'read-0016-oan-expected-places',
  class: AddOanExpectedPlaces,
};

/** A notification stage 1 produced for `accountId`, and where the broker put it (unknown: null). */
export interface ProducedNotification {
  accountId: string;
  eventId: string;
  partition?: number;
  offset?: bigint;
}

/** In stage 1's transaction, after the produce was acked: the last notification per recipient. */
export async function recordExpected(
  em: EntityManager,
  notifications: readonly ProducedNotification[],
): Promise<void> {
  await recordProgress(em, '', new Map(), notifications);
}

/**
 * The event stores whose commands record their positions (the source name is the store's topic
 * without `.events`). A read that may show any of them — the gateway's /events routes — waits for
 * all; each service's own reads wait for its store only.
 */
export const WRITE_SOURCES = ['gofers', 'matching', 'conversations'] as const;
export type WriteSource = (typeof WRITE_SOURCES)[number];

/** In the projection's transaction: the highest position applied per account for `source`. */
export async function recordApplied(
  em: EntityManager,
  source: string,
  perAccount: Map<string, bigint>,
): Promise<void> {
  await recordProgress(em, source, perAccount, []);
}

/**
 * Stage 1's bookkeeping in one statement: `recordApplied` for `source` and, once the batch's
 * notifications were produced and acked, `recordExpected` for them (one round trip, not two).
 * A recipient's row only moves forward in its partition of `oan.events`: a batch that produced
 * earlier but commits later leaves the later notification in place. Another partition replaces the
 * row: a recipient moves only when the topic is repartitioned, after the projector drained (ADR 0041).
 * A row or notification without a place (older than places, or a test's) replaces and is replaced.
 */
export async function recordProgress(
  em: EntityManager,
  source: string,
  perAccount: Map<string, bigint>,
  notifications: readonly ProducedNotification[],
): Promise<void> {
  const last = new Map<string, ProducedNotification>();
  for (const n of notifications) last.set(n.accountId, n);
  if (perAccount.size === 0 && last.size === 0) return;
  const applied = [...perAccount].map(([account_id, p]) => ({ account_id, source, position: p.toString() }));
  const expected = [...last.values()].map((n) => ({
    account_id: n.accountId,
    event_id: n.eventId,
    kafka_partition: n.partition ?? null,
    kafka_offset: n.offset?.toString() ?? null,
  }));
  await sql(
    em,
    `with applied as (
       insert into read.applied_positions (account_id, source, position)
       select account_id, source, position
         from jsonb_to_recordset(?::jsonb) as x(account_id text, source text, position bigint)
       on conflict (account_id, source) do update
         set position = greatest(read.applied_positions.position, excluded.position)
     )
     insert into read.oan_expected as o (account_id, event_id, kafka_partition, kafka_offset)
     select account_id, event_id, kafka_partition, kafka_offset
       from jsonb_to_recordset(?::jsonb)
         as x(account_id text, event_id uuid, kafka_partition integer, kafka_offset bigint)
     on conflict (account_id) do update
       set event_id = excluded.event_id,
           kafka_partition = excluded.kafka_partition,
           kafka_offset = excluded.kafka_offset
       where o.kafka_offset is null or excluded.kafka_offset is null
          or o.kafka_partition <> excluded.kafka_partition or o.kafka_offset < excluded.kafka_offset`,
    [JSON.stringify(applied), JSON.stringify(expected)],
  );
}

// Keeps the larger of the stored and the given position (two commands may finish out of order).
const SET_MAX = `local cur = redis.call('GET', KEYS[1])
if (not cur) or (tonumber(ARGV[1]) > tonumber(cur)) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1`;

// The same per field of a hash: key account → highest position.
const HSET_MAX = `local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (not cur) or (tonumber(ARGV[2]) > tonumber(cur)) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`;

/** How long a command waits to record its position before answering anyway. */
const REMEMBER_TIMEOUT_MS = 1000;

/** Best effort and bounded: the command is stored already, its answer must not become an error. */
async function bounded(work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, REMEMBER_TIMEOUT_MS);
  });
  await Promise.race([work.then(() => undefined), bound])
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
}

/** One position the projector must have applied: `position` of `source`, under `keyAccountId`. */
export interface RequiredPosition {
  keyAccountId: string;
  source: string;
  position: bigint;
}

/** The scripts as ioredis commands: sent by EVALSHA (the script text only when Redis lacks it). */
interface TrackerRedis extends Redis {
  oanSetMax(key: string, position: string, ttl: string): Promise<unknown>;
  oanHsetMax(key: string, field: string, position: string, ttl: string): Promise<unknown>;
}

function withScripts(redis: Redis): TrackerRedis {
  const r = redis as TrackerRedis;
  if (typeof r.oanSetMax !== 'function') {
    redis.defineCommand('oanSetMax', { numberOfKeys: 1, lua: SET_MAX });
    redis.defineCommand('oanHsetMax', { numberOfKeys: 1, lua: HSET_MAX });
  }
  return r;
}

export class WriteTracker {
  private readonly redis: TrackerRedis;

  private readonly prefix: string;
  private readonly ttlSeconds;
  constructor(redis: Redis, prefix: string, ttlSeconds = 3600) {
    this.prefix = prefix;
    this.ttlSeconds = ttlSeconds;
    this.redis = withScripts(redis);
  }

  private key(accountId: string, source: string): string {
    return `${this.prefix}rw:${source}:${accountId}`;
  }

  /**
   * After a command committed: its highest appended position for the account. Best effort and
   * bounded: the command is stored already, so a Redis outage must not turn its answer into an error
   * (a client would retry and duplicate it); the account's next reads then just do not wait.
   */
  async remember(accountId: string, source: string, position: string | bigint): Promise<void> {
    await bounded(
      this.redis.oanSetMax(this.key(accountId, source), position.toString(), String(this.ttlSeconds)),
    );
  }

  private keyMap(accountId: string, source: string): string {
    return `${this.prefix}rw-keys:${source}:${accountId}`;
  }

  /**
   * A command whose events are keyed by one account but made for others too (matching's thread
   * events are keyed by side `a`, ADR 0012): the key account's position as `remember` does, and for
   * each other caller a map `key account → highest position` under the caller's own id, which its
   * reads wait on (`requiredByKey`). Remembering the position under the caller's id would be wrong:
   * the projector records applied positions per key account, so that caller would wait out the
   * whole bound on every read.
   */
  async rememberFor(
    callers: readonly string[],
    keyAccountId: string,
    source: string,
    position: string | bigint,
  ): Promise<void> {
    await this.remember(keyAccountId, source, position);
    for (const caller of new Set(callers)) {
      if (caller === keyAccountId) continue;
      await bounded(
        this.redis.oanHsetMax(
          this.keyMap(caller, source),
          keyAccountId,
          position.toString(),
          String(this.ttlSeconds),
        ),
      );
    }
  }

  async required(accountId: string, source: string): Promise<bigint> {
    const v = await this.redis.get(this.key(accountId, source));
    return v ? BigInt(v) : 0n;
  }

  /** The key accounts (other than itself) `accountId` wrote under in `source`, and their positions. */
  async requiredByKey(accountId: string, source: string): Promise<Map<string, bigint>> {
    const entries = await this.redis.hgetall(this.keyMap(accountId, source));
    return new Map(Object.entries(entries).map(([key, p]) => [key, BigInt(p)]));
  }

  /** Every position `accountId`'s reads of `sources` must wait for: its own and those it wrote under other keys. */
  async requirements(accountId: string, sources: readonly string[]): Promise<RequiredPosition[]> {
    const perSource = await Promise.all(
      sources.map(async (source) => {
        const [own, byKey] = await Promise.all([
          this.required(accountId, source),
          this.requiredByKey(accountId, source),
        ]);
        const all: RequiredPosition[] = [...byKey].map(([keyAccountId, position]) => ({
          keyAccountId,
          source,
          position,
        }));
        if (own > 0n) all.push({ keyAccountId: accountId, source, position: own });
        return all;
      }),
    );
    return perSource.flat();
  }
}

/**
 * Waits until the projector applied every write `accountId` made to `sources` (under its own key or
 * another's, `WriteTracker.requirements`), up to `timeoutMs`. With `envelopes`, then also until every
 * OAN notification produced for the account by then is in read.oan_event (`read.oan_expected`), so
 * the envelopes of its own commands are there too. Returns false on timeout (the caller then answers
 * from what is there; it never blocks forever).
 */
export async function awaitOwnWrites(
  orm: MikroORM,
  tracker: WriteTracker,
  accountId: string,
  sources: readonly string[],
  { timeoutMs = 5000, intervalMs = 10, envelopes = false } = {},
): Promise<boolean> {
  const pending = await tracker.requirements(accountId, sources);
  if (pending.length === 0) return true;
  const accounts = [...new Set(pending.map((p) => p.keyAccountId))];
  const deadline = Date.now() + timeoutMs;
  /** Polls `done` until it holds (true) or the shared deadline passes (false). */
  const until = async (done: () => Promise<boolean>): Promise<boolean> => {
    for (;;) {
      if (await done()) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  const applied = async () => {
    const rows = await sql<{ account_id: string; source: string; position: string }>(
      orm.em.fork(),
      `select account_id, source, position::text as position from read.applied_positions
        where account_id in (?)`,
      [accounts],
    );
    const at = new Map(rows.map((r) => [`${r.account_id}\u0000${r.source}`, BigInt(r.position)]));
    return pending.every((p) => (at.get(`${p.keyAccountId}\u0000${p.source}`) ?? 0n) >= p.position);
  };
  const written = async () => {
    const [missing] = await sql<{ event_id: string }>(
      orm.em.fork(),
      `select x.event_id from read.oan_expected x
        where x.account_id = ? and not exists (select 1 from read.oan_event e where e.event_id = x.event_id)`,
      [accountId],
    );
    return !missing;
  };
  if (!(await until(applied))) return false;
  return envelopes ? until(written) : true;
}
