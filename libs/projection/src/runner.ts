import { Migration, sql, type EntityManager, type MigrationDef, type MikroORM } from '@oan/db';

/** One consumed record, before decoding. */
export interface ProjectionRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  value: Buffer | null;
  timestamp: string;
}

class CreateProjectorTables extends Migration {
  override async up(): Promise<void> {
    this.addSql('create schema if not exists projector');
    this.addSql(`create table if not exists projector.offsets (
      consumer text not null, topic text not null, partition integer not null, next_offset bigint not null,
      primary key (consumer, topic, partition))`);
    this.addSql(`create table if not exists projector.dead_letters (
      id bigserial primary key, consumer text not null, topic text not null, partition integer not null,
      "offset" bigint not null, reason text not null, headers jsonb not null, value bytea,
      recorded_at timestamptz not null default now(), unique (consumer, topic, partition, "offset"))`);
  }
}
export const projectorMigration: MigrationDef = {
  name: 'projector-0001-offsets',
  class: CreateProjectorTables,
};

export type ApplyFn<R> = (em: EntityManager, records: ProjectionRecord[]) => Promise<R>;

/**
 * The next offset this process last committed per (consumer, topic, partition): while it owns the
 * partition, it need not read the row back (and lock it) before each batch. The offset update then
 * checks the stored value is still the one assumed; if another member advanced it meanwhile (a
 * rebalance), the batch rolls back and runs again from the row.
 */
const knownOffsets = new Map<string, bigint>();

class StaleOffset extends Error {}

export interface BatchOutcome<R> {
  result: R | undefined;
  applied: number;
  nextOffset: bigint;
  /** The stored offset, when the batch starts past it (nothing was applied). */
  gapFrom?: bigint;
  /** Attempts rolled back because another member had moved the partition's offset (a rebalance). */
  refused: number;
}

/** The stored offset's move a batch makes: to `next`, only where the row still says `expected`. */
export interface OffsetMove {
  consumer: string;
  topic: string;
  partition: number;
  expected: bigint;
  next: bigint;
}

/**
 * A batch's whole effect and its offset's move in ONE statement, outside any transaction (a statement
 * is atomic): one round trip where the transaction takes four or more (BEGIN, the effect's statements,
 * the compare-and-set, COMMIT). `moved: false` when the stored offset was not `expected` (then the
 * statement wrote nothing); undefined when this batch cannot go that way, and the transaction runs.
 */
export type OneStatementFn<R> = (
  em: EntityManager,
  records: ProjectionRecord[],
  move: OffsetMove,
) => Promise<{ moved: boolean; result: R } | undefined>;

/** The compare-and-set of `OffsetMove` as a statement's first CTE, `moved` (one row when it moved). */
export const MOVED_CTE = `moved as (
    update projector.offsets set next_offset = ?
     where consumer = ? and topic = ? and partition = ? and next_offset = ?
    returning 1
  )`;

/** `MOVED_CTE`'s parameters, in its order. */
export const movedParams = (m: OffsetMove): unknown[] => [
  m.next.toString(),
  m.consumer,
  m.topic,
  m.partition,
  m.expected.toString(),
];

/**
 * Applies one partition's batch and advances the stored offset in ONE transaction, so an effect and
 * its offset commit together. Records below the stored offset were applied already (a redelivery
 * after a crash between this commit and Kafka's) and are skipped. With `oneStatement`, a batch that
 * starts exactly where this process left the partition goes as one statement instead (ADR 0059);
 * any other (the first after a start or a rebalance, a gap, one the function declines) takes the
 * transaction.
 */
export async function applyBatch<R>(
  orm: MikroORM,
  consumer: string,
  topic: string,
  partition: number,
  records: ProjectionRecord[],
  apply: ApplyFn<R>,
  opts: { acceptGap?: boolean; oneStatement?: OneStatementFn<R> } = {},
): Promise<BatchOutcome<R>> {
  const key = `${consumer}\u0000${topic}\u0000${partition}`;
  for (let attempt = 0; ; attempt++) {
    const assumed = knownOffsets.get(key);
    try {
      if (opts.oneStatement && assumed !== undefined) {
        const fresh = records.filter((r) => BigInt(r.offset) >= assumed);
        if (fresh.length > 0 && BigInt(fresh[0]!.offset) === assumed) {
          const next = BigInt(fresh[fresh.length - 1]!.offset) + 1n;
          const move = { consumer, topic, partition, expected: assumed, next };
          const done = await opts.oneStatement(orm.em.fork(), fresh, move);
          if (done?.moved) {
            knownOffsets.set(key, next);
            return { result: done.result, applied: fresh.length, nextOffset: next, refused: attempt };
          }
          // Another member moved the offset (a rebalance): read the row, as the transaction does.
          if (done) throw new StaleOffset();
        }
      }
      const out = await orm.em.fork().transactional(async (em) => {
        const first = records[0] ? BigInt(records[0].offset) : undefined;
        let stored = assumed;
        // Not where this process left the partition: read the row after all.
        if (stored !== undefined && first !== undefined && first > stored && !opts.acceptGap) {
          throw new StaleOffset();
        }
        if (stored === undefined) {
          const [row] = await sql<{ next_offset: string }>(
            em,
            'select next_offset::text as next_offset from projector.offsets where consumer = ? and topic = ? and partition = ? for update',
            [consumer, topic, partition],
          );
          stored = BigInt(row?.next_offset ?? '0');
          // The batch starts after the stored offset: the database is behind what Kafka delivers (a
          // server crash lost the tail of the projector's unflushed commits, ADR 0015, or the group's
          // Kafka offset ran ahead). Nothing is applied: the caller fetches again from `stored`.
          if (first !== undefined && first > stored && !opts.acceptGap) {
            return { result: undefined, applied: 0, nextOffset: stored, gapFrom: stored };
          }
        }
        const from = stored;
        const fresh = records.filter((r) => BigInt(r.offset) >= from);
        if (fresh.length === 0) return { result: undefined, applied: 0, nextOffset: stored };
        const result = await apply(em, fresh);
        const next = BigInt(fresh[fresh.length - 1]!.offset) + 1n;
        const moved = await sql(
          em,
          `insert into projector.offsets (consumer, topic, partition, next_offset) values (?, ?, ?, ?)
           on conflict (consumer, topic, partition) do update set next_offset = excluded.next_offset
             where projector.offsets.next_offset = ?
           returning 1 as moved`,
          [consumer, topic, partition, next.toString(), stored.toString()],
        );
        if (moved.length === 0) throw new StaleOffset();
        return { result, applied: fresh.length, nextOffset: next };
      });
      if (out.gapFrom === undefined) knownOffsets.set(key, out.nextOffset);
      else knownOffsets.delete(key);
      return { ...out, refused: attempt };
    } catch (err) {
      knownOffsets.delete(key);
      if (err instanceof StaleOffset && attempt < 3) continue;
      if (err instanceof StaleOffset) throw new Error(`offset of ${key} kept moving underneath`);
      throw err;
    }
  }
}

/** Forgets the offsets this process assumed (after a replay reset them underneath it). */
export function forgetKnownOffsets(): void {
  knownOffsets.clear();
}

/** Records a fact the projection cannot decode; it never makes the projection throw (STYLE.md). */
export async function deadLetter(
  em: EntityManager,
  consumer: string,
  r: ProjectionRecord,
  reason: string,
): Promise<void> {
  await sql(
    em,
    `insert into projector.dead_letters (consumer, topic, partition, "offset", reason, headers, value)
     values (?, ?, ?, ?, ?, ?::jsonb, ?) on conflict do nothing`,
    [consumer, r.topic, r.partition, r.offset, reason.slice(0, 500), JSON.stringify(r.headers), r.value],
  );
}

export async function storedOffsets(em: EntityManager, consumer: string): Promise<Map<string, bigint>> {
  const rows = await sql<{ topic: string; partition: number; next_offset: string }>(
    em,
    'select topic, partition, next_offset::text as next_offset from projector.offsets where consumer = ?',
    [consumer],
  );
  return new Map(rows.map((r) => [`${r.topic}:${r.partition}`, BigInt(r.next_offset)]));
}
