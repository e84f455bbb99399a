import { runConsumer, type BatchContext, type RunningConsumer } from './consumer.ts';
import type { KafkaHandle } from './kafka.ts';
import type { LogSink } from './logger.ts';
import { fromKafkaMessage, type LogRecord } from './message.ts';
import { HEADER_TYPE, type SchemaRegistry } from './schema-registry.ts';

export interface ReactorLoop {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  logger: LogSink;
  groupId: string;
  topic: string;
  /** The record types this reactor acts on; every other record is committed past at once. */
  types: ReadonlySet<string>;
  /**
   * Acts on one record. `running` turns false when the partition was taken away or the loop stops:
   * a long handler checks it and throws rather than finish work another member now owns.
   */
  handle(record: LogRecord, running: () => boolean): Promise<void>;
  /**
   * Records handled at once (default 1): partitions consumed side by side, and within a batch the
   * records of different `keyOf` keys; one key's records always in order.
   */
  concurrency?: number;
  /** The key whose records must be handled in order (default: one key for the whole partition). */
  keyOf?(record: LogRecord): string;
}

export interface RunningReactor {
  readonly groupId: string;
  readonly consumer: RunningConsumer;
  stop(): Promise<void>;
}

interface Job {
  offset: string;
  record: LogRecord | null;
}

/**
 * Every reactor's loop: a partition's records handled in order (per `keyOf` key, when the reactor
 * runs several at once), an offset committed only once every record up to it was handled, so a
 * crash redelivers and the idempotent commands (deterministic ids, stream versions) turn the
 * redelivery into nothing. A failed handler throws: kafkajs restarts the batch from the last
 * committed offset. A record that cannot be decoded is skipped with a warning, never a stall.
 */
export async function startReactorLoop(loop: ReactorLoop): Promise<RunningReactor> {
  const { kafka, registry, logger, groupId, topic } = loop;
  const concurrency = loop.concurrency ?? 1;
  await kafka.ensureTopics([{ topic }]);

  const decode = (m: BatchContext['messages'][number]): LogRecord | null => {
    // Most records are not for this reactor: the type header rules them out without decoding.
    const type = m.headers[HEADER_TYPE];
    if (type !== undefined && !loop.types.has(type)) return null;
    try {
      const record = fromKafkaMessage(registry, m);
      return loop.types.has(record.type) ? record : null;
    } catch (err) {
      logger.warn(
        { groupId, offset: m.offset, type: err instanceof Error ? err.name : typeof err },
        'reactor skipped an undecodable record',
      );
      return null;
    }
  };

  const eachBatch = async (batch: BatchContext): Promise<void> => {
    const running = () => batch.isRunning() && !batch.isStale();
    const jobs: Job[] = batch.messages.map((m) => ({ offset: m.offset, record: decode(m) }));
    const done = new Set<string>(jobs.filter((j) => !j.record).map((j) => j.offset));
    let next = 0;
    // Commits the longest handled prefix of the batch: never past a record still being handled.
    const advance = async () => {
      let last: string | null = null;
      while (next < jobs.length && done.has(jobs[next]!.offset)) last = jobs[next++]!.offset;
      if (last !== null) await batch.commit(last);
    };
    // A handler can outlast the session timeout; keep the membership alive meanwhile.
    const beat = setInterval(() => void batch.heartbeat().catch(() => undefined), 3000);
    try {
      const byKey = new Map<string, Job[]>();
      for (const j of jobs) {
        if (!j.record) continue;
        const key = loop.keyOf?.(j.record) ?? '';
        byKey.set(key, [...(byKey.get(key) ?? []), j]);
      }
      const queues = [...byKey.values()];
      const worker = async () => {
        for (let q = queues.shift(); q; q = queues.shift()) {
          for (const job of q) {
            if (!running()) return;
            await loop.handle(job.record!, running);
            done.add(job.offset);
            await advance();
          }
        }
      };
      const results = await Promise.allSettled(Array.from({ length: Math.min(concurrency, 64) }, worker));
      if (running()) await advance();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      clearInterval(beat);
    }
  };

  const consumer = await runConsumer({
    kafka,
    groupId,
    topics: [topic],
    fromBeginning: true,
    ...(concurrency > 1 ? { partitionsConsumedConcurrently: concurrency } : {}),
    eachBatch,
  });
  logger.info({ groupId, topic }, 'reactor started');
  return { groupId, consumer, stop: () => consumer.stop() };
}

/** The shape every domain event union has: a `type` discriminator and its `data`. */
export interface TypedEvent {
  type: string;
  data: object;
}

/** What a handler gets beside its event: the raw record (key, offset, headers) and the liveness check. */
export interface ReactorContext {
  record: LogRecord;
  running: () => boolean;
}

/** One handler per event type the reactor acts on, each typed by its member of the union `E`. */
export type ReactorHandlers<E extends TypedEvent> = {
  [T in E['type']]?: (event: Extract<E, { type: T }>, ctx: ReactorContext) => Promise<void>;
};

export interface ReactorSpec<E extends TypedEvent> extends Omit<
  ReactorLoop,
  'types' | 'handle' | 'groupId' | 'keyOf'
> {
  group: string;
  /** Events of a type not named here are committed past without being decoded. */
  on: ReactorHandlers<E>;
  /**
   * The key whose events must be handled in order (default: one key for the whole partition), read
   * from the typed event as the handlers read it; only events of a type named in `on` reach it.
   */
  keyOf?: (event: E) => string;
}

/**
 * A reactor declared by its handlers: `reactor<GoferEvent>({ group, topic, on: { GoferDeleted } })`.
 * The loop's ordering, commit and skip rules are `startReactorLoop`'s; the union is the caller's,
 * since this package knows no domain. The decoded data is trusted to match its type: the registry
 * decoded it with the Avro schema the union mirrors.
 */
export function reactor<E extends TypedEvent>(spec: ReactorSpec<E>): Promise<RunningReactor> {
  const { group, on, keyOf, ...loop } = spec;
  const handlers = on as Record<string, ((event: E, ctx: ReactorContext) => Promise<void>) | undefined>;
  const eventOf = (record: LogRecord) => ({ type: record.type, data: record.data }) as unknown as E;
  return startReactorLoop({
    ...loop,
    groupId: group,
    types: new Set(Object.keys(on)),
    ...(keyOf ? { keyOf: (record: LogRecord) => keyOf(eventOf(record)) } : {}),
    handle: async (record, running) => {
      await handlers[record.type]?.(eventOf(record), { record, running });
    },
  });
}
