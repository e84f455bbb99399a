import { randomUUID } from 'node:crypto';
import { sql } from '@oan/db';
import { goferStreamId } from '@oan/domain';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { openTasksOf, saveTask } from '../a2a/taskStore.ts';
import { ForbiddenError } from '../domain/errors.ts';
import { clearA2APublished, setA2APublished } from '../infra/a2aAgents.ts';
import { a2aTurnSnapshot } from '../infra/relayView.ts';
import { assertOwnsActiveGofer, goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

export interface A2AInput {
  accountId: string;
  goferId: string;
}

/** ADR 0035: the owner makes the Gofer reachable as an A2A agent (idempotent). */
export async function publishOnA2A(ctx: GoferContext, input: A2AInput): Promise<void> {
  await assertOwnsActiveGofer(ctx, input.accountId, input.goferId);
  const { goferId, accountId } = input;
  await goferCommands(ctx)(
    goferStreamId(goferId),
    { type: 'PublishOnA2A', data: { accountId } },
    {
      inline: async (em, _appended, state) => {
        if (state.status === 'active' && state.a2aPublished)
          await setA2APublished(em, { goferId, accountId, published: true, now: ctx.now().toISOString() });
      },
    },
  );
}

/**
 * Takes the Gofer off A2A (idempotent): from the commit on, its card is 404 and sends are refused;
 * then its open tasks end `canceled`.
 */
export async function unpublishFromA2A(ctx: GoferContext, input: A2AInput): Promise<void> {
  if (!plausibleGoferId(input.goferId)) throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  const { goferId, accountId } = input;
  await goferCommands(ctx)(
    goferStreamId(goferId),
    { type: 'UnpublishFromA2A', data: { accountId } },
    { inline: (em) => clearA2APublished(em, goferId, ctx.now().toISOString()) },
  );
  await cancelOpenTasks(ctx, input);
}

/** Every task of the Gofer that has not ended ends `canceled` (an unpublication, a deletion). */
export async function cancelOpenTasks(ctx: GoferContext, input: A2AInput): Promise<void> {
  for (const { callerId, task } of await openTasksOf(ctx.orm.em.fork(), input.goferId)) {
    await saveTask(ctx, input, callerId, canceled(task, ctx.now()));
  }
}

function canceled(task: Task, now: Date): Task {
  return {
    ...task,
    status: {
      state: TaskState.TASK_STATE_CANCELED,
      timestamp: now.toISOString(),
      message: {
        messageId: randomUUID(),
        contextId: task.contextId,
        taskId: task.id,
        role: Role.ROLE_AGENT,
        parts: [
          {
            content: { $case: 'text', value: 'This agent was taken off A2A by its owner.' },
            mediaType: 'text/plain',
            filename: '',
            metadata: undefined,
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    },
  };
}

export interface A2ATurn {
  goferId: string;
  taskId: string;
  /** The turn's number in its task (1 for the task's first message). */
  turn: number;
  caller: string;
  asked: string;
  answered: string;
}

/** The command id of turn `turn` of an A2A task: the record's, and the recovery sweep's. */
export const a2aTurnCommandId = (taskId: string, turn: number) => `a2a/${taskId}/${turn}`;

/**
 * One answered A2A turn as an assistant row of kind 'a2a' in the Gofer's role-chat, exactly once
 * under the command id `a2a/<taskId>/<turn>` (a retry never doubles it), its reply kept beside it in
 * the same transaction (`gofers.a2a_turn_replies`) for the recovery sweep. Appends nothing when the
 * Gofer was unpublished or deleted meanwhile, or when the sweep already ended the task: the caller
 * then gets no answer from this turn.
 */
export async function recordA2ATurn(ctx: GoferContext, turn: A2ATurn): Promise<{ appended: boolean }> {
  const { appended } = await goferCommands(ctx)(
    goferStreamId(turn.goferId),
    {
      type: 'AddA2ATurn',
      data: { messageId: ctx.ids(), caller: turn.caller, asked: turn.asked, answered: turn.answered },
    },
    // The bounded view, not the whole stream (a busy Gofer's role-chat is long), the Gofer's row
    // locked so concurrent turns queue instead of failing their version check.
    {
      commandId: a2aTurnCommandId(turn.taskId, turn.turn),
      snapshot: a2aTurnSnapshot(ctx.store.schema, turn.goferId),
      inline: async (em, appended) => {
        if (appended.length === 0) return;
        await sql(
          em,
          `insert into gofers.a2a_turn_replies (task_id, turn, reply, recorded_at) values (?, ?, ?, ?)
           on conflict do nothing`,
          [turn.taskId, turn.turn, turn.answered, ctx.now().toISOString()],
        );
      },
    },
  );
  return { appended: appended.length > 0 };
}
