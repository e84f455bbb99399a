import type { MikroORM } from '@oan/db';
import {
  reactor,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import {
  brainMetrics,
  buildBrainInput,
  BrainError,
  type BrainInput,
  type BrainOutput,
  type BrainProvider,
} from '../brain/index.ts';
import { addAssistantTurn } from '../commands/assistantTurn.ts';
import type { GoferContext } from '../commands/context.ts';
import { goferStreamId, type ChatMessageAdded, type GoferEvent } from '@oan/domain';

export interface BrainDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  orm: MikroORM;
  ctx: GoferContext;
  provider: BrainProvider;
  logger: LogSink;
  topicPrefix: string;
  /** Generation attempts per user message before the silent-failure path (no event in v1). */
  maxAttempts?: number;
  /** First backoff between attempts; doubles each time. */
  backoffMs?: number;
  /** Partitions (hence accounts) handled at once, and Gofers of one batch generated at once. */
  concurrency?: number;
}

export type RunningBrain = RunningReactor;

/**
 * The Gofer's brain (scripted or openai, behind one interface): answers each owner message once.
 * One account's events share a partition, so one Gofer's messages are answered in order; other
 * partitions, and other Gofers of one batch, run at the same time. An offset is committed only once
 * every message up to it has its reply appended (or was given up on), so a crash redelivers, and
 * `addAssistantTurn` (idempotent on replyTo) turns the redelivery into nothing.
 */
export async function startBrain(deps: BrainDeps): Promise<RunningBrain> {
  const { kafka, registry, logger, provider } = deps;
  const topic = `${deps.topicPrefix}gofers.events`;
  const groupId = `${deps.topicPrefix}gofers.brain`;
  const concurrency = deps.concurrency ?? 4;

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
      // v1 emits nothing for a failed generation; the owner can post again.
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

  const loop = await reactor<GoferEvent>({
    kafka,
    registry,
    logger,
    group: groupId,
    topic,
    concurrency,
    // One Gofer's messages in order; other Gofers of the batch, and other partitions, side by side.
    keyOf: ({ data }) => data.goferId,
    on: {
      ChatMessageAdded: async ({ data: turn }, { running }) => {
        if (turn.role === 'user') await answer(turn, running);
      },
    },
  });
  logger.info({ groupId, topic, provider: provider.kind }, 'brain started');
  return loop;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function errorInfo(err: unknown): Record<string, unknown> {
  if (err instanceof BrainError) return { type: err.name, code: err.code, message: err.message };
  // Other errors may quote what they were given: their class only.
  return { type: err instanceof Error ? err.name : typeof err };
}
