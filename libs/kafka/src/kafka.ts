// createKafka: the one place that constructs kafkajs clients. Every client it hands out is
// connected and tracked, and `close()` disconnects all of them.
import { isIP, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Kafka, Partitioners } from 'kafkajs';
import type { Admin, Consumer, ISocketFactory, ITopicConfig, Producer } from 'kafkajs';
import { Counter } from 'prom-client';
import { fixKafkajs } from './kafkajsFixes.ts';
import { brokerAway, retrying, waitForBroker } from './retrying.ts';
import { openSender, type Sender } from './sender.ts';
import { kafkajsLogCreator, stderrLogger, toKafkajsLogLevel } from './logger.ts';
import type { LogLevelName, LogSink } from './logger.ts';

export interface CreateKafkaOptions {
  brokers: string[];
  clientId: string;
  /** kafkajs log level; default 'warn'. */
  logLevel?: LogLevelName;
  /** Where kafkajs output goes (pino fits); default JSON lines on stderr. */
  logger?: LogSink;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Partitions of a topic `ensureTopics` creates without a count of its own; default: the broker's. */
  topicPartitions?: number;
  /**
   * `host:port` → `host:port`: where to connect instead of an address a broker advertises (config
   * `KAFKA_BROKER_ROUTES`). kafkajs dials the addresses the metadata names, so rewriting the seed list
   * alone would not move the traffic. Empty or absent: kafkajs' own socket factory.
   */
  brokerRoutes?: Readonly<Record<string, string>>;
}

export interface TopicSpec {
  topic: string;
  /** Default: the handle's `topicPartitions`, else the broker's num.partitions. */
  numPartitions?: number;
}

export interface ProducerOptions {
  /** Exactly-once per partition within a producer session (acks must stay -1). Default true. */
  idempotent?: boolean;
  /** Makes a transactional producer (implies idempotent, one request in flight). */
  transactionalId?: string;
  transactionTimeoutMs?: number;
}

/** The consumers' session timeout unless one is given (the broker's minimum is 6 s). */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

export interface ConsumerOptions {
  groupId: string;
  /** Default false: read_committed, aborted transactional records are never delivered. */
  readUncommitted?: boolean;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Longest time a fetch waits for data; default 500 ms (kafkajs: 5000). */
  maxWaitTimeMs?: number;
  /** Bytes a fetch waits for, up to `maxWaitTimeMs`, before it answers; default 1 (answer at once). */
  minBytes?: number;
}

export interface KafkaHandle {
  readonly clientId: string;
  readonly logger: LogSink;
  /** The shared admin client, connected on first use. */
  admin(): Promise<Admin>;
  /**
   * Creates the missing topics (replication = broker default, retention.ms=-1) and resolves once each
   * has a leader for every partition; returns the ones this call created (a creator racing it over
   * overlapping topics may be credited with all of them). A topic that exists keeps its partitions.
   */
  ensureTopics(topics: TopicSpec[]): Promise<string[]>;
  /** Deletes the topics that exist; returns the deleted ones. */
  deleteTopics(names: string[]): Promise<string[]>;
  /** A connected producer (kafkajs `Producer`); Java-compatible murmur2 partitioning by key. */
  producer(options?: ProducerOptions): Promise<Producer>;
  /** An idempotent producer for sends that renews itself after a fatal idempotence error (`Sender`). */
  sender(): Promise<Sender>;
  /** A connected consumer (kafkajs `Consumer`), not yet subscribed or running. */
  consumer(options: ConsumerOptions): Promise<Consumer>;
  /**
   * Runs `call` until it resolves for as long as it fails because the broker does not answer
   * (`brokerAway`), with pauses doubling up to 5 s and a warning for each; any other error, or the
   * handle being closed, ends the wait with that error. `producer()`, `consumer()`, `ensureTopics` and
   * a consumer's first join wait this way: a process started while its broker is away waits for it.
   */
  untilBrokerAnswers<T>(what: string, call: () => Promise<T>): Promise<T>;
  /** Disconnects every client handed out (idempotent). */
  close(): Promise<void>;
}

/** Every request a process's kafkajs clients send, by role and API (the cost report's Kafka side). */
const kafkaRequests = new Counter({
  name: 'oan_kafka_requests_total',
  help: 'Requests sent to the Kafka brokers, per client role and Kafka API (Produce, Fetch, OffsetCommit, …)',
  labelNames: ['role', 'api'],
});

/** kafkajs' own keep-alive delay (network/socketFactory.js), kept for routed sockets. */
const KEEP_ALIVE_DELAY_MS = 60_000;

/** A kafkajs socket factory that dials each routed broker address at its route instead. */
export function routedSocketFactory(routes: Readonly<Record<string, string>>): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const to = routes[`${host}:${port}`];
    const colon = to?.lastIndexOf(':') ?? -1;
    const at = to ? { host: to.slice(0, colon), port: Number(to.slice(colon + 1)) } : { host, port };
    // The certificate is still the advertised host's, whatever address the socket goes to.
    const socket = ssl
      ? tlsConnect({ ...at, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
      : netConnect(at, onConnect);
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    return socket;
  };
}

/** Brokers from `KAFKA_BROKERS` (comma-separated), default `127.0.0.1:9092`. */
export function brokersFromEnv(env: Record<string, string | undefined> = process.env): string[] {
  const list = (env.KAFKA_BROKERS ?? '127.0.0.1:9092')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) throw new Error('KAFKA_BROKERS is empty');
  return list;
}

export function createKafka(options: CreateKafkaOptions): KafkaHandle {
  const logger = options.logger ?? stderrLogger;
  fixKafkajs(logger);
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    logLevel: toKafkajsLogLevel(options.logLevel ?? 'warn'),
    logCreator: kafkajsLogCreator(logger),
    ...(options.brokerRoutes && Object.keys(options.brokerRoutes).length > 0
      ? { socketFactory: routedSocketFactory(options.brokerRoutes) }
      : {}),
  });
  const producers = new Set<Producer>();
  const consumers = new Set<Consumer>();
  let adminPromise: Promise<Admin> | undefined;
  let closed = false;

  const assertOpen = (): void => {
    if (closed) throw new Error(`kafka handle '${options.clientId}' is closed`);
  };

  const untilBrokerAnswers = <T>(what: string, call: () => Promise<T>): Promise<T> =>
    waitForBroker(call, { what, logger, stopped: () => closed });

  const admin = (): Promise<Admin> => {
    assertOpen();
    if (!adminPromise) {
      const client = kafka.admin();
      adminPromise = client.connect().then(
        () => client,
        (err: unknown) => {
          adminPromise = undefined;
          throw err;
        },
      );
    }
    return adminPromise;
  };

  // Adding partitions to a topic moves keys to other partitions, and with them an account's order:
  // that is a migration, never done here. Said at start, so a changed setting does not go unnoticed.
  const warnOfOtherPartitionCounts = (
    topics: TopicSpec[],
    meta: { name: string; partitions: unknown[] }[],
    created: readonly string[],
  ): void => {
    for (const t of meta) {
      const wanted = topics.find((x) => x.topic === t.name)?.numPartitions ?? options.topicPartitions;
      if (wanted === undefined || created.includes(t.name) || t.partitions.length === wanted) continue;
      logger.warn(
        { topic: t.name, partitions: t.partitions.length, wanted },
        'kafka topic exists with another partition count; it is left as it is',
      );
    }
  };

  /**
   * Creates the topics that are missing and returns once every partition of every topic asked for
   * has a leader. A broker that has just started (no controller yet, leaders still being elected)
   * and fleet processes creating the same topics side by side are normal at start-up: each attempt
   * lists again. A broker that does not answer is waited for as long as it takes (`brokerAway`);
   * other errors are retried for up to a minute before the last one is thrown.
   */
  const ensureTopics = async (topics: TopicSpec[]): Promise<string[]> => {
    const names = topics.map((t) => t.topic);
    const created: string[] = [];
    const othersUntil = Date.now() + 60_000;
    return retrying(
      async () => {
        const a = await admin();
        const existing = new Set(await a.listTopics());
        const missing = topics.filter((t) => !existing.has(t.topic));
        if (missing.length > 0) {
          const specs: ITopicConfig[] = missing.map((t) => ({
            topic: t.topic,
            numPartitions: t.numPartitions ?? options.topicPartitions ?? -1,
            replicationFactor: -1,
            configEntries: [{ name: 'retention.ms', value: '-1' }],
          }));
          // Resolves false when every topic already existed (a concurrent creator won the race).
          if (await a.createTopics({ topics: specs, waitForLeaders: false, timeout: 10_000 })) {
            created.push(...missing.map((t) => t.topic));
            logger.info({ topics: missing.map((t) => t.topic) }, 'kafka topics ensured');
          }
        }
        const { topics: meta } = await a.fetchTopicMetadata({ topics: names });
        const leaderless = meta.filter(
          (t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0),
        );
        if (leaderless.length === 0) {
          warnOfOtherPartitionCounts(topics, meta, created);
          return created;
        }
        throw new Error(`no leader yet for ${leaderless.map((t) => t.name).join(', ')}`);
      },
      {
        withinMs: Infinity,
        maxPauseMs: 2_000,
        retry: (err) => !closed && (brokerAway(err) || Date.now() < othersUntil),
        onRetry: (err, attempt) =>
          logger.warn({ err: String(err), attempt }, 'kafka topics not ready yet; retrying'),
      },
    );
  };

  const deleteTopics = async (names: string[]): Promise<string[]> => {
    const a = await admin();
    const existing = new Set(await a.listTopics());
    const present = names.filter((n) => existing.has(n));
    if (present.length > 0) await a.deleteTopics({ topics: present, timeout: 30_000 });
    return present;
  };

  const producer = async (opts: ProducerOptions = {}): Promise<Producer> => {
    assertOpen();
    const transactional = opts.transactionalId !== undefined;
    const p = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      idempotent: transactional || (opts.idempotent ?? true),
      maxInFlightRequests: transactional || (opts.idempotent ?? true) ? 1 : 5,
      ...(transactional ? { transactionalId: opts.transactionalId } : {}),
      ...(opts.transactionTimeoutMs !== undefined ? { transactionTimeout: opts.transactionTimeoutMs } : {}),
    });
    p.on(p.events.REQUEST, (e) => kafkaRequests.inc({ role: 'producer', api: e.payload.apiName }));
    await untilBrokerAnswers('producer connect', () => p.connect());
    producers.add(p);
    return p;
  };

  const sender = (): Promise<Sender> =>
    openSender({
      producer: () => producer({ idempotent: true }),
      forget: (p) => producers.delete(p),
      admin,
      logger,
    });

  const consumer = async (opts: ConsumerOptions): Promise<Consumer> => {
    assertOpen();
    const c = kafka.consumer({
      groupId: opts.groupId,
      allowAutoTopicCreation: false,
      readUncommitted: opts.readUncommitted ?? false,
      maxWaitTimeInMs: opts.maxWaitTimeMs ?? 500,
      ...(opts.minBytes !== undefined ? { minBytes: opts.minBytes } : {}),
      // A member killed with -9 keeps its partitions until this expires, and its successor's join
      // waits for it: 10 s instead of kafkajs's 30 s (long handlers heartbeat, see reactor.ts).
      sessionTimeout: opts.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
      ...(opts.heartbeatIntervalMs !== undefined ? { heartbeatInterval: opts.heartbeatIntervalMs } : {}),
    });
    c.on(c.events.REQUEST, (e) => kafkaRequests.inc({ role: 'consumer', api: e.payload.apiName }));
    await untilBrokerAnswers(`consumer connect (${opts.groupId})`, () => c.connect());
    consumers.add(c);
    return c;
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    const all: Array<Promise<void>> = [
      ...[...consumers].map((c) => c.disconnect()),
      ...[...producers].map((p) => p.disconnect()),
    ];
    if (adminPromise) all.push(adminPromise.then((a) => a.disconnect()));
    const results = await Promise.allSettled(all);
    for (const r of results) {
      if (r.status === 'rejected') logger.warn({ err: String(r.reason) }, 'kafka client disconnect failed');
    }
  };

  return {
    clientId: options.clientId,
    logger,
    admin,
    ensureTopics,
    untilBrokerAnswers,
    deleteTopics,
    producer,
    sender,
    consumer,
    close,
  };
}
