import { sql, type MikroORM } from '@oan/db';
import { goferStreamId, type ChatMessageAdded, type GoferEvent } from '@oan/domain';
import {
  reactorMember,
  startReactorGroup,
  type ReactorMember,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import { recordOwnerAnswer } from '../commands/callerQuestions.ts';
import type { GoferContext } from '../commands/context.ts';
import type { CallerChannel } from '../domain/callerQuestions.ts';
import { goferDecider } from '../domain/gofer.ts';

/** The owner's answer to a caller's question, as the caller's channel receives it (ADR 0036). */
export interface OwnerAnswer {
  goferId: string;
  /** The row that asked the owner (`AskOwnerResult.messageId`): the key to be idempotent on. */
  questionMessageId: string;
  taskId: string;
  caller: string;
  channel: CallerChannel;
  /** The owner's message text, word for word. */
  answer: string;
  /** When the owner posted it. */
  answeredAt: string;
}

/**
 * The port a caller's channel implements to get its owner's answers (the A2A executor completes
 * its waiting task). Called once per question; again only when the process died between this call
 * and recording it, so an implementation is idempotent on `questionMessageId`. `delivered: false`
 * says the caller is gone (the task ended): the owner is told. A throw is retried (the reactor
 * redelivers): throw only for what may pass.
 */
export interface OwnerAnswers {
  answered(answer: OwnerAnswer): Promise<{ delivered: boolean }>;
}

export interface OwnerAnswersDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  orm: MikroORM;
  ctx: GoferContext;
  logger: LogSink;
  topicPrefix: string;
  /** Per channel; a question whose channel has none is recorded as not delivered. */
  channels: Partial<Record<CallerChannel, OwnerAnswers>>;
  /** Suffix of the consumer group (tests run several side by side); none by default. */
  groupSuffix?: string;
}

/**
 * ADR 0036: hands the owner's answer to the caller who waits for it. For each owner message that
 * answered a caller's question (the Gofer's stream says which, as the brain reads it), the
 * channel's port is called, then `RecordOwnerAnswer` appends the answer's record, so a redelivered
 * message finds the question closed and calls nothing.
 */
export function ownerAnswersReactor(deps: OwnerAnswersDeps): ReactorMember {
  const { logger } = deps;
  const topic = `${deps.topicPrefix}gofers.events`;
  const group = `${deps.topicPrefix}gofers.owner-answers${deps.groupSuffix ?? ''}`;

  const handOn = async (turn: ChatMessageAdded): Promise<void> => {
    // Most owners' messages are interview turns: a Gofer never asked for a caller is not read.
    const [asked] = await sql(
      deps.orm.em.fork(),
      `select 1 from "${deps.ctx.store.schema}".events where stream_id = ? and type = 'CallerQuestionAsked' limit 1`,
      [goferStreamId(turn.goferId)],
    );
    if (!asked) return;
    const stream = await deps.ctx.store.readStream<GoferEvent['data']>(
      deps.orm.em.fork(),
      goferStreamId(turn.goferId),
    );
    const state = stream
      .map((e) => ({ type: e.type, data: e.data }) as GoferEvent)
      .reduce(goferDecider.evolve, goferDecider.initialState());
    if (state.status !== 'active') return;
    const q = state.callerQuestions.find((c) => c.answer?.messageId === turn.messageId);
    if (!q?.answer) return; // not an answer, or its record is already there
    const channel = q.channel as CallerChannel;
    const port = deps.channels[channel];
    const { delivered } = port
      ? await port.answered({
          goferId: turn.goferId,
          questionMessageId: q.messageId,
          taskId: q.taskId,
          caller: q.caller,
          channel,
          answer: q.answer.content,
          answeredAt: q.answer.createdAt,
        })
      : { delivered: false };
    // Ids only: the answer is the owner's and the caller's business.
    logger.info(
      { goferId: turn.goferId, questionMessageId: q.messageId, channel, delivered },
      'owner answered a caller',
    );
    await recordOwnerAnswer(deps.ctx, { goferId: turn.goferId, questionMessageId: q.messageId, delivered });
  };

  return reactorMember<GoferEvent>({
    group,
    topic,
    on: {
      ChatMessageAdded: async ({ data }) => {
        if (data.role === 'user') await handOn(data);
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startOwnerAnswers = (deps: OwnerAnswersDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [ownerAnswersReactor(deps)] });
