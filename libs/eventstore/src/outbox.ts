import pg from 'pg';
import type { StoredEvent } from './types.ts';

export interface OutboxMessage {
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

export interface OutboxLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxPublisherOptions {
  /** Connection string; the publisher keeps one dedicated session (advisory lock + LISTEN). */
  databaseUrl: string;
  schema: string;
  /** Encodes one stored event as a Kafka record (Avro value + headers). */
  encode: (event: StoredEvent) => OutboxMessage;
  /** Publishes records in order and resolves once the broker acknowledged all of them. */
  publish: (messages: OutboxMessage[]) => Promise<void>;
  logger: OutboxLogger;
  batchSize?: number;
  /**
   * Bytes of records (key, value, headers) per publish call; a larger record goes alone. The broker
   * refuses a record batch over its `message.max.bytes` (about 1 MiB by default), and a producer puts
   * a send's records of one partition into one batch: two large records together were refused on
   * every retry, and nothing behind them was ever published.
   */
  maxPublishBytes?: number;
  idleMs?: number;
  onPublished?: (count: number) => void;
}

export interface OutboxPublisher {
  stop(): Promise<void>;
  /** Rows not yet acknowledged by the broker. */
  backlog(): Promise<number>;
  isLeader(): boolean;
}

interface OutboxRow {
  position: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  version: number;
  account_id: string;
  data: unknown;
  occurred_at: Date;
}

/**
 * Publishes `<schema>.outbox` to Kafka in position order, then deletes what the broker acknowledged.
 * At-least-once: a crash between the ack and the delete republishes those rows; consumers dedup by
 * event id. One leader per schema (session advisory lock), so order holds with replicas.
 */
export async function startOutboxPublisher(opts: OutboxPublisherOptions): Promise<OutboxPublisher> {
  const s = opts.schema;
  const batchSize = opts.batchSize ?? 500;
  const idleMs = opts.idleMs ?? 1000;
  let running = true;
  let leader = false;
  let client: pg.Client | undefined;
  let wake: (() => void) | undefined;
  // A wake-up that arrives while a step runs is kept, not lost: the next sleep returns at once.
  let woken = false;
  /**
   * Positions the broker acknowledged and the outbox still holds: the next step's read deletes them
   * (ADR 0060). A step comes at the next wake-up, or `DELETE_WITHIN_MS` after this one at the latest.
   */
  let published: string[] = [];

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false;
        resolve();
        return;
      }
      const t = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(t);
        wake = undefined;
        woken = false;
        resolve();
      };
    });

  const onNotification = (): void => {
    woken = true;
    wake?.();
  };

  async function connect(): Promise<pg.Client> {
    // Its only write, deleting what the broker acknowledged, can be lost in a crash without harm (the
    // rows are published again and consumers skip them): no wait for the WAL flush (ADR 0015).
    const c = new pg.Client({ connectionString: opts.databaseUrl, options: '-c synchronous_commit=off' });
    c.on('error', (err) => opts.logger.warn({ err: err.message }, 'outbox connection error'));
    c.on('notification', onNotification);
    await c.connect();
    await c.query(`listen "${s}_outbox"`);
    return c;
  }

  async function step(): Promise<number> {
    client ??= await connect();
    // What this step reads covers every wake-up so far; only later ones must wake the next sleep.
    woken = false;
    if (!leader) {
      // The lock keeps the key from when this process was named "relay": a publisher of the old name
      // still running during a rolling deploy then waits for it, and two never publish one schema.
      const r = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) as ok', [
        `relay:${s}`,
      ]);
      leader = r.rows[0]?.ok === true;
      if (!leader) return 0;
      opts.logger.info({ schema: s }, 'outbox publisher is leader');
    }
    // The rows the last step published go in the same statement as this read (ADR 0060).
    const { rows } = await client.query<OutboxRow>(outboxBatchQuery(s), [batchSize, published]);
    published = [];
    if (rows.length === 0) return 0;
    for (const chunk of byBytes(
      rows.map((r) => opts.encode(toStored(r))),
      opts.maxPublishBytes ?? 512 * 1024,
    ))
      await opts.publish(chunk);
    published = rows.map((r) => r.position);
    opts.onPublished?.(rows.length);
    return rows.length;
  }

  const loop = (async () => {
    let failures = 0;
    while (running) {
      try {
        const n = await step();
        failures = 0;
        if (n < batchSize && running) {
          await sleep(
            published.length > 0 ? Math.min(DELETE_WITHIN_MS, idleMs) : leader ? idleMs : idleMs * 2,
          );
        }
      } catch (err) {
        // 42P01: the service that owns the schema has not run its migrations yet (fleet start-up).
        // Whoever publishes next reads those rows again (at-least-once; consumers skip them).
        published = [];
        if ((err as { code?: string }).code === '42P01') {
          await client?.end().catch(() => undefined);
          client = undefined;
          leader = false;
          if (running) await sleep(idleMs);
          continue;
        }
        failures += 1;
        opts.logger.error({ err: (err as Error).message, schema: s }, 'outbox publisher step failed');
        // The session (and its lock) may be gone: start over with a new one.
        leader = false;
        await client?.end().catch(() => undefined);
        client = undefined;
        if (running) await sleep(Math.min(5000, 100 * 2 ** failures));
      }
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      // What the last step published, deleted now rather than published again after a restart.
      if (client && leader && published.length > 0) {
        await client
          .query(`delete from "${s}".outbox where position = any($1::bigint[])`, [published])
          .catch(() => undefined);
      }
      await client?.end().catch(() => undefined);
    },
    async backlog() {
      const c = new pg.Client({ connectionString: opts.databaseUrl });
      await c.connect();
      try {
        const r = await c.query<{ n: string }>(`select count(*)::text as n from "${s}".outbox`);
        return Number(r.rows[0]?.n ?? 0);
      } catch (err) {
        // 42P01: the store's service has not created its tables yet; nothing is waiting.
        if ((err as { code?: unknown }).code === '42P01') return 0;
        throw err;
      } finally {
        await c.end();
      }
    },
    isLeader: () => leader,
  };
}

/**
 * How long at most the rows a step published stay in the outbox when no wake-up comes: under load the
 * next step comes sooner and deletes them in its read; idle, a step of its own deletes them then.
 */
const DELETE_WITHIN_MS = 50;

/**
 * Deletes the positions `$2` (the rows the last step published, acknowledged by the broker) and reads
 * the next `$1` rows of `<schema>.outbox` after them with their events, in position order, in one
 * statement (ADR 0060): the read's snapshot still holds the rows its own CTE deletes, so it leaves
 * `$2` out. The waiting positions
 * are taken first and the events looked up by them, so a read costs what it returns. Written as a
 * join, the planner chose a merge join whenever its statistics (always stale: rows leave the outbox
 * within milliseconds) counted many rows waiting, and that join walked `events` by its key from the
 * first position ever appended: 2.6 ms for 48 rows behind 3,300 published events in the throughput
 * bench (ADR 0054).
 */
export function outboxBatchQuery(schema: string): string {
  return `with gone as (delete from "${schema}".outbox where position = any ($2::bigint[]))
          select e.position::text as position, e.event_id, e.stream_id, e.stream_version, e.type, e.version,
                 e.account_id, e.data, e.occurred_at
            from "${schema}".events e
           where e.position = any (array(select position from "${schema}".outbox
                                          where position <> all ($2::bigint[])
                                          order by position limit $1))
           order by e.position`;
}

/** Consecutive runs of messages of at most `max` bytes each (one message over it runs alone). */
function byBytes(messages: OutboxMessage[], max: number): OutboxMessage[][] {
  const chunks: OutboxMessage[][] = [];
  let bytes = 0;
  for (const m of messages) {
    let size = Buffer.byteLength(m.key) + m.value.length;
    for (const [k, v] of Object.entries(m.headers)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
    const last = chunks.at(-1);
    if (last && bytes + size <= max) {
      last.push(m);
      bytes += size;
    } else {
      chunks.push([m]);
      bytes = size;
    }
  }
  return chunks;
}

function toStored(r: OutboxRow): StoredEvent {
  return {
    position: r.position,
    eventId: r.event_id,
    streamId: r.stream_id,
    streamVersion: r.stream_version,
    type: r.type,
    version: r.version,
    partitionKey: r.account_id,
    data: r.data,
    occurredAt: new Date(r.occurred_at).toISOString(),
  };
}

/** Headers every domain record carries (docs/architecture.md). */
export function domainHeaders(e: StoredEvent): Record<string, string> {
  return {
    'oan-type': e.type,
    'oan-schema-version': String(e.version),
    'oan-event-id': e.eventId,
    'oan-stream-id': e.streamId,
    'oan-stream-version': String(e.streamVersion),
    'oan-occurred-at': e.occurredAt,
    // The store position: what read-your-writes compares (libs/projection readYourWrites).
    'oan-position': e.position,
  };
}
