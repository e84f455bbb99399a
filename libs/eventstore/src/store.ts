import { randomUUID } from 'node:crypto';
import { Migration, sql, type EntityManager, type MigrationDef, type MikroORM } from '@oan/db';
import { ConcurrencyError, type EventValidator, type StoredEvent, type StreamAppend } from './types.ts';

interface EventRow {
  position: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  version: number;
  account_id: string;
  data: unknown;
  occurred_at: Date | string;
}

/** The event store of one service: `<schema>.events` (append-only) and `<schema>.outbox` (to publish). */
export class EventStore {
  /** A wake-up NOTIFY is in flight (`committed`); another commit meanwhile asks for one more after it. */
  private waking = false;
  private wakeAgain = false;

  readonly schema: string;
  private readonly validator?: EventValidator;
  constructor(schema: string, validator?: EventValidator) {
    this.schema = schema;
    this.validator = validator;
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`Bad schema name ${schema}`);
  }

  get notifyChannel(): string {
    return `${this.schema}_outbox`;
  }

  /** The migration that creates this store's tables; list it first in the service's migrations. */
  migration(): MigrationDef {
    const s = this.schema;
    class CreateEventStore extends Migration {
      override async up(): Promise<void> {
        this.addSql(`create table if not exists "${s}".events (
          position bigserial primary key,
          event_id uuid not null unique,
          stream_id text not null,
          stream_version integer not null,
          type text not null,
          version integer not null,
          account_id text not null,
          data jsonb not null,
          occurred_at timestamptz not null,
          unique (stream_id, stream_version))`);
        this.addSql(
          `create table if not exists "${s}".outbox (position bigint primary key references "${s}".events(position))`,
        );
      }
    }
    return { name: `${s}-0000-event-store`, class: CreateEventStore };
  }

  async readStream<T = unknown>(em: EntityManager, streamId: string): Promise<StoredEvent<T>[]> {
    const rows = await sql<EventRow>(
      em,
      `select position, event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
         from "${this.schema}".events where stream_id = ? order by stream_version`,
      [streamId],
    );
    return rows.map((r) => toStored<T>(r));
  }

  /** The events with these ids, in position order. */
  async readEvents<T = unknown>(em: EntityManager, eventIds: readonly string[]): Promise<StoredEvent<T>[]> {
    if (eventIds.length === 0) return [];
    const rows = await sql<EventRow>(
      em,
      `select position, event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
         from "${this.schema}".events where event_id in (select jsonb_array_elements_text(?::jsonb)::uuid)
        order by position`,
      [JSON.stringify(eventIds)],
    );
    return rows.map((r) => toStored<T>(r));
  }

  /**
   * Appends to several streams atomically, inside `em`'s transaction (the caller's), in ONE statement:
   * every event and its outbox row. A stream whose version moved since it was read fails the whole
   * append with ConcurrencyError (optimistic concurrency): the statement inserts a stream's events only
   * when its current version is the expected one, and the unique (stream_id, stream_version) index
   * refuses a concurrent writer that read the same version. Wakes nothing: after the caller's commit,
   * `committed()` tells the outbox publisher (it also polls, so a missed wake-up only delays).
   */
  async append(em: EntityManager, appends: StreamAppend[]): Promise<StoredEvent[]> {
    const rows: AppendRow[] = [];
    for (const a of appends) {
      if (a.events.length === 0) continue;
      let expected: number;
      if (a.expectedVersion === 'any') expected = await this.currentVersion(em, a.streamId);
      else if (a.expectedVersion === 'no_stream') expected = 0;
      else expected = a.expectedVersion;
      let version = expected;
      for (const e of a.events) {
        version += 1;
        const schemaVersion = e.version ?? this.validator?.latestVersion?.(e.type) ?? 1;
        this.validator?.assertValid(e.type, schemaVersion, e.data);
        rows.push({
          i: rows.length,
          event_id: e.eventId ?? randomUUID(),
          stream_id: a.streamId,
          stream_version: version,
          type: e.type,
          version: schemaVersion,
          account_id: e.partitionKey,
          data: e.data,
          occurred_at: e.occurredAt,
          expected,
        });
      }
    }
    if (rows.length === 0) return [];
    const s = this.schema;
    let inserted: EventRow[];
    try {
      inserted = await sql<EventRow>(
        em,
        `with x as (
           select * from jsonb_to_recordset(?::jsonb) as x(i integer, event_id uuid, stream_id text,
             stream_version integer, type text, version integer, account_id text, data jsonb,
             occurred_at timestamptz, expected integer)
         ), ok as (
           select x.* from x
            where x.expected = coalesce((select max(e.stream_version) from "${s}".events e
                                          where e.stream_id = x.stream_id), 0)
         ), ins as (
           insert into "${s}".events
             (event_id, stream_id, stream_version, type, version, account_id, data, occurred_at)
           select event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
             from ok order by i
           returning position, event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
         ), ob as (insert into "${s}".outbox (position) select position from ins)
         select * from ins order by position`,
        [JSON.stringify(rows)],
      );
    } catch (err) {
      // 23505: a concurrent writer took this stream version first (or the event id exists).
      if (isUniqueViolation(err)) throw new ConcurrencyError(rows[0]!.stream_id);
      throw err;
    }
    if (inserted.length !== rows.length) {
      const have = new Set(inserted.map((r) => r.stream_id));
      throw new ConcurrencyError(rows.find((r) => !have.has(r.stream_id))?.stream_id ?? rows[0]!.stream_id);
    }
    return inserted.map((r) => toStored(r));
  }

  /**
   * After the transaction that appended committed: wakes the outbox publisher (NOTIFY outside any data
   * transaction, so commits never queue behind the notification lock). Fire and forget, and
   * coalesced: while one wake-up is in flight, the next ones collapse into a single one after it.
   */
  committed(orm: MikroORM): void {
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = true;
    void sql(orm.em.fork(), `notify "${this.notifyChannel}"`)
      .catch(() => undefined)
      .finally(() => {
        this.waking = false;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.committed(orm);
        }
      });
  }

  private async currentVersion(em: EntityManager, streamId: string): Promise<number> {
    const [row] = await sql<{ v: number | null }>(
      em,
      `select max(stream_version) as v from "${this.schema}".events where stream_id = ?`,
      [streamId],
    );
    return row?.v ?? 0;
  }
}

/** One event as the append statement reads it: a row to be, its order and its stream's expected version. */
type AppendRow = Omit<EventRow, 'position' | 'occurred_at'> & {
  i: number;
  occurred_at: string;
  expected: number;
};

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

function toStored<T>(r: EventRow): StoredEvent<T> {
  return {
    position: String(r.position),
    eventId: r.event_id,
    streamId: r.stream_id,
    streamVersion: r.stream_version,
    type: r.type,
    version: r.version,
    partitionKey: r.account_id,
    data: r.data as T,
    occurredAt: new Date(r.occurred_at).toISOString(),
  };
}
