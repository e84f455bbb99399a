import { randomUUID } from 'node:crypto';
import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import {
  ConcurrencyError,
  type EventValidator,
  type ExpectedVersion,
  type NewEvent,
  type StoredEvent,
  type StreamAppend,
} from './types';

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
  constructor(
    readonly schema: string,
    private readonly validator?: EventValidator,
  ) {
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

  /**
   * Appends to several streams atomically, inside `em`'s transaction (the caller's). A stream whose
   * version moved since it was read fails the whole append with ConcurrencyError (invariant 5).
   */
  async append(em: EntityManager, appends: StreamAppend[]): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    for (const a of appends) {
      const current = await this.currentVersion(em, a.streamId);
      if (!matches(a.expectedVersion, current)) throw new ConcurrencyError(a.streamId);
      let version = current;
      for (const e of a.events) {
        version += 1;
        stored.push(await this.insert(em, a.streamId, version, e));
      }
    }
    if (stored.length > 0) await sql(em, 'select pg_notify(?, ?)', [this.notifyChannel, '']);
    return stored;
  }

  private async currentVersion(em: EntityManager, streamId: string): Promise<number> {
    const [row] = await sql<{ v: number | null }>(
      em,
      `select max(stream_version) as v from "${this.schema}".events where stream_id = ?`,
      [streamId],
    );
    return row?.v ?? 0;
  }

  private async insert(
    em: EntityManager,
    streamId: string,
    streamVersion: number,
    e: NewEvent,
  ): Promise<StoredEvent> {
    const version = e.version ?? 1;
    this.validator?.assertValid(e.type, version, e.data);
    try {
      const [row] = await sql<EventRow>(
        em,
        `insert into "${this.schema}".events
           (event_id, stream_id, stream_version, type, version, account_id, data, occurred_at)
         values (?, ?, ?, ?, ?, ?, ?::jsonb, ?)
         returning position, event_id, stream_id, stream_version, type, version, account_id, data, occurred_at`,
        [
          e.eventId ?? randomUUID(),
          streamId,
          streamVersion,
          e.type,
          version,
          e.accountId,
          JSON.stringify(e.data),
          e.occurredAt,
        ],
      );
      await sql(em, `insert into "${this.schema}".outbox (position) values (?)`, [row!.position]);
      return toStored(row!);
    } catch (err) {
      // 23505: a concurrent writer took this stream version first (or the event id exists).
      if (isUniqueViolation(err)) throw new ConcurrencyError(streamId);
      throw err;
    }
  }
}

function matches(expected: ExpectedVersion, current: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === 0;
  return expected === current;
}

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
    accountId: r.account_id,
    data: r.data as T,
    occurredAt: new Date(r.occurred_at).toISOString(),
  };
}
