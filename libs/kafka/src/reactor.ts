import { runConsumer, type BatchContext, type RunningConsumer } from './consumer.ts';
import type { KafkaHandle } from './kafka.ts';
import type { LogSink } from './logger.ts';
import { fromConsumedMessage, type LogRecord } from './message.ts';
import { HEADER_TYPE, type SchemaRegistry } from './schema-registry.ts';

/** What a reactor does with the records of one topic; one or more run in one consumer group. */
export interface ReactorMember {
  /**
   * The reactor's own name: the consumer group it runs as when it runs alone. A shared group that
   * has no offsets of its own yet starts from where its members' own groups stood (ADR 0049).
   */
  name: string;
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

export interface ReactorGroup {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  logger: LogSink;
  /** The shared consumer group; by default the name of the one member. */
  groupId?: string;
  members: readonly ReactorMember[];
  /**
   * How long the broker may hold a fetch to gather records (up to `GATHER_BYTES`) before it answers;
   * default none: a record is fetched as soon as it is there. For reactors that nobody waits on
   * within a fraction of a second: under load their group fetches a few times a second, not once per
   * record (ADR 0049).
   */
  gatherMs?: number;
}

/** What a gathering fetch waits for at most, in bytes: about a hundred events. */
const GATHER_BYTES = 64 * 1024;

/**
 * The `gatherMs` of the processes' shared groups (ADR 0049): their reactions come at most this much
 * later when the fleet is quiet, and an idle group fetches five times a second instead of twice.
 */
export const BACKGROUND_GATHER_MS = 200;

export interface RunningReactor {
  readonly groupId: string;
  readonly consumer: RunningConsumer;
  stop(): Promise<void>;
}

interface Job {
  offset: string;
  record: LogRecord | null;
  /** Members still handling the record; the record is done at zero. */
  left: number;
}

/**
 * Every reactor's loop: a partition's records handled in order (per `keyOf` key, when the reactor
 * runs several at once), an offset committed only once every record up to it was handled, so a
 * crash redelivers and the idempotent commands (deterministic ids, stream versions) turn the
 * redelivery into nothing. A failed handler throws: kafkajs restarts the batch from the last
 * committed offset. A record that cannot be decoded is skipped with a warning, never a stall.
 *
 * Several reactors of one process may share the group (ADR 0049): each record of their topics is
 * fetched and decoded once, and handed to every member that acts on its type, each member keeping
 * its own order (`keyOf`) and concurrency. An offset is committed once every member has handled
 * every record up to it; a failure of any member redelivers the batch to all of them (each is
 * idempotent, as it already is for a crash). A batch ends when its slowest member is done, so a
 * reactor that waits on something slow (a language model) keeps a group of its own.
 */
export async function startReactorGroup(group: ReactorGroup): Promise<RunningReactor> {
  const { kafka, registry, logger, members } = group;
  const [first] = members;
  if (!first) throw new Error('a reactor group needs at least one member');
  if (group.groupId === undefined && members.length > 1)
    throw new Error('a reactor group of several members needs its own groupId');
  const groupId = group.groupId ?? first.name;
  const topics = [...new Set(members.map((m) => m.topic))];
  await kafka.ensureTopics(topics.map((topic) => ({ topic })));
  // A group coordinator still loading (a broker just started) answers NOT_COORDINATOR, which the
  // admin client does not retry; a broker away is waited for, as every start-up call on it is.
  const startAt = await kafka.untilBrokerAnswers(`offsets of ${groupId}`, () =>
    carriedOffsets(kafka, groupId, members),
  );

  const byTopic = new Map(topics.map((t) => [t, members.filter((m) => m.topic === t)]));
  const typesOf = new Map(
    topics.map((t) => [t, new Set(byTopic.get(t)!.flatMap((m) => [...m.types]))] as const),
  );

  const decode = (types: ReadonlySet<string>, m: BatchContext['messages'][number]): LogRecord | null => {
    // Most records are not for these reactors: the type header rules them out without decoding.
    const type = m.headers[HEADER_TYPE];
    if (type !== undefined && !types.has(type)) return null;
    try {
      const record = fromConsumedMessage(registry, m);
      return types.has(record.type) ? record : null;
    } catch (err) {
      logger.warn(
        { groupId, offset: m.offset, type: err instanceof Error ? err.name : typeof err },
        'reactor skipped an undecodable record',
      );
      return null;
    }
  };

  const eachBatch = async (batch: BatchContext): Promise<void> => {
    const here = byTopic.get(batch.topic) ?? [];
    const types = typesOf.get(batch.topic) ?? new Set<string>();
    const running = () => batch.isRunning() && !batch.isStale();
    const jobs: Job[] = batch.messages.map((m) => {
      const record = decode(types, m);
      const left = record ? here.filter((r) => r.types.has(record.type)).length : 0;
      return { offset: m.offset, record, left };
    });
    let next = 0;
    // Commits the longest handled prefix of the batch: never past a record still being handled.
    const advance = async () => {
      let last: string | null = null;
      while (next < jobs.length && jobs[next]!.left === 0) last = jobs[next++]!.offset;
      if (last !== null) await batch.commit(last);
    };
    // A handler can outlast the session timeout; keep the membership alive meanwhile.
    const beat = setInterval(() => void batch.heartbeat().catch(() => undefined), 3000);
    try {
      const workers = here.flatMap((member) => {
        const byKey = new Map<string, Job[]>();
        for (const j of jobs) {
          if (!j.record || !member.types.has(j.record.type)) continue;
          const key = member.keyOf?.(j.record) ?? '';
          const queue = byKey.get(key);
          if (queue) queue.push(j);
          else byKey.set(key, [j]);
        }
        const queues = [...byKey.values()];
        const worker = async () => {
          for (let q = queues.shift(); q; q = queues.shift()) {
            for (const job of q) {
              if (!running()) return;
              await member.handle(job.record!, running);
              job.left -= 1;
              await advance();
            }
          }
        };
        const count = Math.min(member.concurrency ?? 1, 64, queues.length);
        return Array.from({ length: count }, worker);
      });
      const results = await Promise.allSettled(workers);
      if (running()) await advance();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      clearInterval(beat);
    }
  };

  const concurrency = Math.max(...members.map((m) => m.concurrency ?? 1));
  const consumer = await runConsumer({
    kafka,
    groupId,
    topics,
    fromBeginning: true,
    ...(startAt.size > 0 ? { startAt } : {}),
    ...(group.gatherMs !== undefined ? { maxWaitTimeMs: group.gatherMs, minBytes: GATHER_BYTES } : {}),
    ...(concurrency > 1 ? { partitionsConsumedConcurrently: concurrency } : {}),
    eachBatch,
  });
  logger.info(
    { groupId, topics, members: members.map((m) => m.name), carried: startAt.size },
    'reactor started',
  );
  return { groupId, consumer, stop: () => consumer.stop() };
}

/**
 * A service's background reactors in its one shared group, `<prefix><service>.reactors`, gathering
 * their fetches (ADR 0049): for reactions nobody waits on within a fraction of a second.
 */
export function startBackgroundReactors(
  deps: { kafka: KafkaHandle; registry: SchemaRegistry; logger: LogSink; topicPrefix: string },
  service: string,
  members: readonly ReactorMember[],
): Promise<RunningReactor> {
  const { kafka, registry, logger } = deps;
  return startReactorGroup({
    kafka,
    registry,
    logger,
    groupId: `${deps.topicPrefix}${service}.reactors`,
    members,
    gatherMs: BACKGROUND_GATHER_MS,
  });
}

/**
 * Where a shared group starts on each partition it has no committed offset on: the earliest offset
 * its members' own groups had committed there, so no member misses a record and one that was ahead
 * handles a few again, as after a crash. A partition one of them never committed on is read from the
 * beginning. Only read here: the group's first join seeks there (`startAt`), and its commits follow.
 */
async function carriedOffsets(
  kafka: KafkaHandle,
  groupId: string,
  members: readonly ReactorMember[],
): Promise<Map<string, string>> {
  const startAt = new Map<string, string>();
  const own = members.filter((m) => m.name !== groupId);
  if (own.length === 0) return startAt;
  const admin = await kafka.admin();
  const committedOf = async (g: string, topic: string) => {
    const [t] = await admin.fetchOffsets({ groupId: g, topics: [topic] });
    return new Map((t?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  };
  for (const topic of new Set(own.map((m) => m.topic))) {
    const mine = await committedOf(groupId, topic);
    const names = [...new Set(own.filter((m) => m.topic === topic).map((m) => m.name))];
    const theirs = await Promise.all(names.map((g) => committedOf(g, topic)));
    for (const [partition, committed] of mine) {
      if (committed >= 0n) continue;
      const offsets = theirs.map((o) => o.get(partition) ?? -1n);
      if (offsets.some((o) => o < 0n)) continue;
      startAt.set(`${topic}:${partition}`, offsets.reduce((a, b) => (b < a ? b : a)).toString());
    }
  }
  return startAt;
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

export interface MemberSpec<E extends TypedEvent> {
  /** The reactor's own consumer group, when it runs alone (`ReactorMember.name`). */
  group: string;
  topic: string;
  /** Events of a type not named here are committed past without being decoded. */
  on: ReactorHandlers<E>;
  /**
   * The key whose events must be handled in order (default: one key for the whole partition), read
   * from the typed event as the handlers read it; only events of a type named in `on` reach it.
   */
  keyOf?: (event: E) => string;
  concurrency?: number;
}

export interface ReactorSpec<E extends TypedEvent> extends MemberSpec<E> {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  logger: LogSink;
}

/**
 * A reactor declared by its handlers, to run in a group: `reactorMember<GoferEvent>({ group, topic,
 * on: { GoferDeleted } })`. The union is the caller's, since this package knows no domain. The
 * decoded data is trusted to match its type: the registry decoded it with the Avro schema the union
 * mirrors.
 */
export function reactorMember<E extends TypedEvent>(spec: MemberSpec<E>): ReactorMember {
  const { group, on, keyOf, topic, concurrency } = spec;
  const handlers = on as Record<string, ((event: E, ctx: ReactorContext) => Promise<void>) | undefined>;
  const eventOf = (record: LogRecord) => ({ type: record.type, data: record.data }) as unknown as E;
  return {
    name: group,
    topic,
    types: new Set(Object.keys(on)),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(keyOf ? { keyOf: (record: LogRecord) => keyOf(eventOf(record)) } : {}),
    handle: async (record, running) => {
      await handlers[record.type]?.(eventOf(record), { record, running });
    },
  };
}

/** One reactor alone in its own group: `reactor<GoferEvent>({ kafka, registry, logger, group, topic, on })`. */
export function reactor<E extends TypedEvent>(spec: ReactorSpec<E>): Promise<RunningReactor> {
  const { kafka, registry, logger, ...member } = spec;
  return startReactorGroup({ kafka, registry, logger, members: [reactorMember(member)] });
}
