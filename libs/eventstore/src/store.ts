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
    return this.write(em, await this.rowsOf(em, appends));
  }

  /** One call's rows as one statement, all or nothing: a moved stream or a taken version is a ConcurrencyError. */
  private async write(em: EntityManager, rows: AppendRow[]): Promise<StoredEvent[]> {
    if (rows.length === 0) return [];
    let inserted: EventRow[];
    try {
      inserted = await this.insert(em, rows);
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
   * `append` outside any transaction, committed when it resolves, with a group commit: the calls
   * made in one turn of the event loop (while fewer than `GROUP_IN_FLIGHT` statements are in
   * flight; else when one returns) go to Postgres as ONE statement and one commit. Each call is
   * still all or nothing on its own: a call whose stream version moved fails alone with
   * ConcurrencyError and the others of its group are written; when the statement as a whole is
   * refused (a unique index: two calls of the group, or another writer, took one stream version or
   * event id), every call of the group runs again alone, so only the conflicting one fails.
   */
  async appendCommitted(orm: MikroORM, appends: StreamAppend[]): Promise<StoredEvent[]> {
    const rows = await this.rowsOf(orm.em.fork(), appends);
    if (rows.length === 0) return [];
    return new Promise<StoredEvent[]>((resolve, reject) => {
      const call: GroupedCall = { rows, resolve, reject };
      if (this.group === null) {
        this.group = [call];
        setImmediate(() => this.flushGroup(orm));
      } else this.group.push(call);
    });
  }

  private group: GroupedCall[] | null = null;
  private groupsInFlight = 0;

  private flushGroup(orm: MikroORM): void {
    const calls = this.group;
    if (calls === null || this.groupsInFlight >= GROUP_IN_FLIGHT) return; // the next return flushes it
    this.group = null;
    this.groupsInFlight += 1;
    void this.writeGroup(orm, calls).finally(() => {
      this.groupsInFlight -= 1;
      this.flushGroup(orm);
    });
  }

  private async writeGroup(orm: MikroORM, calls: GroupedCall[]): Promise<void> {
    if (calls.length === 1) {
      const [call] = calls as [GroupedCall];
      await this.write(orm.em.fork(), call.rows).then(call.resolve, call.reject);
      return;
    }
    // One row list, each call's rows contiguous, `g` naming the call and `i` the order of insertion.
    const rows: AppendRow[] = [];
    calls.forEach((call, g) => {
      for (const r of call.rows) rows.push({ ...r, i: rows.length, g });
    });
    let inserted: EventRow[];
    try {
      inserted = await this.insert(orm.em.fork(), rows);
    } catch (err) {
      if (!isUniqueViolation(err)) {
        for (const call of calls) call.reject(err);
        return;
      }
      await Promise.all(
        calls.map((call) => this.write(orm.em.fork(), call.rows).then(call.resolve, call.reject)),
      );
      return;
    }
    const byId = new Map(inserted.map((r) => [r.event_id, r]));
    for (const call of calls) {
      const mine = call.rows.map((r) => byId.get(r.event_id));
      const missing = call.rows.find((_, k) => mine[k] === undefined);
      if (missing) call.reject(new ConcurrencyError(missing.stream_id));
      else call.resolve((mine as EventRow[]).map((r) => toStored(r)));
    }
  }

  /** The rows of `appends`, validated, their versions counted from each stream's expected one. */
  private async rowsOf(em: EntityManager, appends: StreamAppend[]): Promise<AppendRow[]> {
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
          g: 0,
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
    return rows;
  }

  /**
   * The append statement: every row and its outbox row, except the rows of a call (`g`) one of
   * whose streams is no longer at the version it expected; returns the rows written.
   */
  private insert(em: EntityManager, rows: AppendRow[]): Promise<EventRow[]> {
    const s = this.schema;
    return sql<EventRow>(
      em,
      `with x as (
         select * from jsonb_to_recordset(?::jsonb) as x(i integer, g integer, event_id uuid,
           stream_id text, stream_version integer, type text, version integer, account_id text,
           data jsonb, occurred_at timestamptz, expected integer)
       ), moved as (
         select distinct x.g from x
          where x.expected <> coalesce((select max(e.stream_version) from "${s}".events e
                                         where e.stream_id = x.stream_id), 0)
       ), ins as (
         insert into "${s}".events
           (event_id, stream_id, stream_version, type, version, account_id, data, occurred_at)
         select event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
           from x where x.g not in (select g from moved) order by i
         returning position, event_id, stream_id, stream_version, type, version, account_id, data, occurred_at
       ), ob as (insert into "${s}".outbox (position) select position from ins)
       select * from ins order by position`,
      [JSON.stringify(rows)],
    );
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

/**
 * One event as the append statement reads it: a row to be, its order, the call it belongs to (a
 * group commit's calls are all or nothing each) and its stream's expected version.
 */
type AppendRow = Omit<EventRow, 'position' | 'occurred_at'> & {
  i: number;
  g: number;
  occurred_at: string;
  expected: number;
};

/** One `appendCommitted` call waiting for its group's statement, its rows made and validated once. */
interface GroupedCall {
  rows: AppendRow[];
  resolve: (stored: StoredEvent[]) => void;
  reject: (err: unknown) => void;
}

/**
 * Group statements of one store in flight at once: calls arriving meanwhile gather into the next
 * group. Below the ORM's pool (10), so transactions of the same process still find connections.
 */
const GROUP_IN_FLIGHT = 4;

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
