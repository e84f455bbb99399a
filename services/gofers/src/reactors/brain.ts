import type { MikroORM } from '@oan/db';
import {
  fromKafkaMessage,
  HEADER_TYPE,
  runConsumer,
  type BatchContext,
  type ConsumedMessage,
  type KafkaHandle,
  type Logger,
  type RunningConsumer,
  type SchemaRegistry,
} from '@oan/log';
import {
  brainMetrics,
  buildBrainInput,
  BrainError,
  type BrainInput,
  type BrainOutput,
  type BrainProvider,
} from '../brain';
import { addAssistantTurn } from '../commands/assistantTurn';
import type { GoferContext } from '../commands/context';
import { goferStreamId, type ChatMessageAdded, type GoferEvent } from '@oan/domain';

export interface BrainDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  orm: MikroORM;
  ctx: GoferContext;
  provider: BrainProvider;
  logger: Logger;
  topicPrefix: string;
  /** Generation attempts per user message before the silent-failure path (§8.6). */
  maxAttempts?: number;
  /** First backoff between attempts; doubles each time. */
  backoffMs?: number;
  /** Partitions (hence accounts) handled at once, and Gofers of one batch generated at once. */
  concurrency?: number;
}

export interface RunningBrain {
  readonly groupId: string;
  readonly consumer: RunningConsumer;
  stop(): Promise<void>;
}

interface Job {
  offset: string;
  turn: ChatMessageAdded | null;
}

/**
 * The Gofer's brain (ARCHITECTURE §5): answers each owner message once. One account's events share
 * a partition, so one Gofer's messages are answered in order; other partitions, and other Gofers of
 * one batch, run at the same time. An offset is committed only once every message up to it has its
 * reply appended (or was given up on), so a crash redelivers, and `addAssistantTurn` (idempotent on
 * replyTo) turns the redelivery into nothing.
 */
export async function startBrain(deps: BrainDeps): Promise<RunningBrain> {
  const { kafka, registry, logger, provider } = deps;
  const topic = `${deps.topicPrefix}gofers.events`;
  const groupId = `${deps.topicPrefix}gofers.brain`;
  const concurrency = deps.concurrency ?? 4;
  await kafka.ensureTopics([{ topic }]);

  const decode = (m: ConsumedMessage): ChatMessageAdded | null => {
    // Most records are not owner messages: the type header rules them out without decoding.
    const type = m.headers[HEADER_TYPE];
    if (type !== undefined && type !== 'ChatMessageAdded') return null;
    try {
      const record = fromKafkaMessage<GoferEvent['data']>(registry, m);
      if (record.type !== 'ChatMessageAdded') return null;
      const turn = record.data as ChatMessageAdded;
      return turn.role === 'user' ? turn : null;
    } catch (err) {
      // A record we cannot read is no owner message we could answer: skip it, never block the Gofers.
      logger.warn({ offset: m.offset, err: errorInfo(err) }, 'brain skipped an undecodable record');
      return null;
    }
  };

  const generate = async (input: BrainInput, running: () => boolean): Promise<BrainOutput | null> => {
    const attempts = deps.maxAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await provider.reply(input);
      } catch (err) {
        const ids = { goferId: input.gofer.goferId, messageId: input.message.messageId, attempt };
        // Never the owner's words: ids and the error's kind only.
        logger.warn({ ...ids, err: errorInfo(err) }, 'brain generation failed');
        if (attempt >= attempts) return null;
        if (!running()) throw new Error('brain stopping: the message is retried after the restart');
        await sleep((deps.backoffMs ?? 250) * 2 ** (attempt - 1));
      }
    }
  };

  const answer = async (turn: ChatMessageAdded, running: () => boolean): Promise<void> => {
    const stream = await deps.ctx.store.readStream<GoferEvent['data']>(
      deps.orm.em.fork(),
      goferStreamId(turn.goferId),
    );
    const prepared = buildBrainInput(
      stream.map((e) => ({ type: e.type, data: e.data }) as GoferEvent),
      turn.messageId,
    );
    if (prepared.kind === 'skip') return;
    const started = performance.now();
    const output = await generate(prepared.input, running);
    const seconds = (performance.now() - started) / 1000;
    brainMetrics.latency.observe({ provider: provider.kind, outcome: output ? 'ok' : 'failed' }, seconds);
    if (!output) {
      // §8.6: v1 emits nothing for a failed generation; the owner can post again.
      brainMetrics.failures.inc({ provider: provider.kind });
      logger.error(
        { goferId: turn.goferId, messageId: turn.messageId, provider: provider.kind },
        'brain gave up on a message',
      );
      return;
    }
    await addAssistantTurn(deps.ctx, {
      goferId: turn.goferId,
      replyTo: turn.messageId,
      content: output.content,
      pendingQuery: output.pendingQuery,
      responseConstraints: output.responseConstraints,
      ...(output.profile ? { profile: output.profile } : {}),
      ...(output.discoveryStatus ? { discoveryStatus: output.discoveryStatus } : {}),
    });
  };

  const eachBatch = async (batch: BatchContext): Promise<void> => {
    const running = () => batch.isRunning() && !batch.isStale();
    const jobs: Job[] = batch.messages.map((m) => ({ offset: m.offset, turn: decode(m) }));
    const done = new Set<string>(jobs.filter((j) => !j.turn).map((j) => j.offset));
    let next = 0;
    // Commits the longest finished prefix of the batch: never past a message still being answered.
    const advance = async () => {
      let last: string | null = null;
      while (next < jobs.length && done.has(jobs[next]!.offset)) last = jobs[next++]!.offset;
      if (last !== null) await batch.commit(last);
    };
    // Generation can outlast the session timeout; keep the membership alive meanwhile.
    const beat = setInterval(() => void batch.heartbeat().catch(() => undefined), 3000);
    try {
      const byGofer = new Map<string, Job[]>();
      for (const j of jobs)
        if (j.turn) byGofer.set(j.turn.goferId, [...(byGofer.get(j.turn.goferId) ?? []), j]);
      const queues = [...byGofer.values()];
      const worker = async () => {
        for (let q = queues.shift(); q; q = queues.shift()) {
          for (const job of q) {
            if (!running()) return;
            await answer(job.turn!, running);
            done.add(job.offset);
            await advance();
          }
        }
      };
      const results = await Promise.allSettled(Array.from({ length: concurrency }, worker));
      await advance();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      // Infrastructure failures (Postgres, Kafka): kafkajs retries from the last resolved offset.
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
    partitionsConsumedConcurrently: concurrency,
    eachBatch,
  });
  logger.info({ groupId, topic, provider: provider.kind }, 'brain started');

  return { groupId, consumer, stop: () => consumer.stop() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function errorInfo(err: unknown): Record<string, unknown> {
  if (err instanceof BrainError) return { type: err.name, code: err.code, message: err.message };
  // Other errors may quote what they were given: their class only.
  return { type: err instanceof Error ? err.name : typeof err };
}
