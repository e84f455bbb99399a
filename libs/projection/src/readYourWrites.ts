import type { Redis } from 'ioredis';
import { Migration, sql, type EntityManager, type MigrationDef, type MikroORM } from '@oan/db';

/**
 * Invariant 4, read-your-writes per account. A command records, per account and source event store,
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

/** In the projection's transaction: the highest position applied per account for `source`. */
export async function recordApplied(
  em: EntityManager,
  source: string,
  perAccount: Map<string, bigint>,
): Promise<void> {
  if (perAccount.size === 0) return;
  const rows = [...perAccount].map(([account_id, p]) => ({ account_id, source, position: p.toString() }));
  await sql(
    em,
    `insert into read.applied_positions (account_id, source, position)
     select account_id, source, position
       from jsonb_to_recordset(?::jsonb) as x(account_id text, source text, position bigint)
     on conflict (account_id, source) do update
       set position = greatest(read.applied_positions.position, excluded.position)`,
    [JSON.stringify(rows)],
  );
}

// Keeps the larger of the stored and the given position (two commands may finish out of order).
const SET_MAX = `local cur = redis.call('GET', KEYS[1])
if (not cur) or (tonumber(ARGV[1]) > tonumber(cur)) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1`;

/** How long a command waits to record its position before answering anyway. */
const REMEMBER_TIMEOUT_MS = 1000;

export class WriteTracker {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds = 3600,
  ) {}

  private key(accountId: string, source: string): string {
    return `${this.prefix}rw:${source}:${accountId}`;
  }

  /**
   * After a command committed: its highest appended position for the account. Best effort and
   * bounded: the command is stored already, so a Redis outage must not turn its answer into an error
   * (a client would retry and duplicate it); the account's next reads then just do not wait.
   */
  async remember(accountId: string, source: string, position: string | bigint): Promise<void> {
    const stored = this.redis.eval(
      SET_MAX,
      1,
      this.key(accountId, source),
      position.toString(),
      String(this.ttlSeconds),
    );
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, REMEMBER_TIMEOUT_MS);
    });
    await Promise.race([stored.then(() => undefined), bound])
      .catch(() => undefined)
      .finally(() => clearTimeout(timer));
  }

  async required(accountId: string, source: string): Promise<bigint> {
    const v = await this.redis.get(this.key(accountId, source));
    return v ? BigInt(v) : 0n;
  }
}

/**
 * Waits until the projector applied every write `accountId` made to `sources`, up to `timeoutMs`.
 * Returns false on timeout (the caller then answers from what is there; it never blocks forever).
 */
export async function awaitOwnWrites(
  orm: MikroORM,
  tracker: WriteTracker,
  accountId: string,
  sources: readonly string[],
  { timeoutMs = 5000, intervalMs = 10 } = {},
): Promise<boolean> {
  const needed = await Promise.all(
    sources.map(async (s) => [s, await tracker.required(accountId, s)] as const),
  );
  const pending = needed.filter(([, p]) => p > 0n);
  if (pending.length === 0) return true;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await sql<{ source: string; position: string }>(
      orm.em.fork(),
      `select source, position::text as position from read.applied_positions where account_id = ?`,
      [accountId],
    );
    const applied = new Map(rows.map((r) => [r.source, BigInt(r.position)]));
    if (pending.every(([s, p]) => (applied.get(s) ?? 0n) >= p)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
