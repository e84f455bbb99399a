import { Task as TaskJson, TaskState, type Task } from '@a2a-js/sdk';
import { sql, transaction } from '@oan/db';
import { recordCommand, takeCommandId } from '@oan/eventstore';
import type { FastifyBaseLogger } from 'fastify';
import { a2aTurnCommandId } from '../commands/a2a.ts';
import { withdrawCallerQuestion } from '../commands/callerQuestions.ts';
import type { GoferContext } from '../commands/context.ts';
import { a2aAgentOf } from '../infra/a2aAgents.ts';
import type { A2AHub } from './hub.ts';
import { agentMessage, derivedId, questionIdOf, replyArtifact, tellCaller, userTurns } from './owner.ts';
import { saveTask } from './taskStore.ts';

/** A turn cut off by a crash before it was recorded: the caller may send it again. */
export const INTERRUPTED = 'Sorry, I was interrupted before I could answer. Please send your message again.';

/** Tasks settled per pass; the next pass takes the rest. */
const BATCH = 50;
/** One sweep across every gofers process at a time: a pass runs under this advisory lock. */
const SWEEP_LOCK = 'gofers:a2a-recovery-sweep';

export interface RecoveryOptions {
  /** A task whose row has not changed for this long while submitted or working lost its turn. */
  staleSeconds: number;
}

export interface RecoveryResult {
  /** False when another process held the sweep: this pass did nothing. */
  ran: boolean;
  completed: number;
  failed: number;
}

interface Candidate {
  task_id: string;
  gofer_id: string;
  caller_id: string;
  task: unknown;
}

/**
 * One pass of the A2A recovery sweep, run by one gofers process at a time
 * (`pg_try_advisory_xact_lock`; the others skip the pass). A task still `submitted` or `working`
 * whose row has not changed for `staleSeconds`, and whose turn does not run in this process, lost
 * its turn to a crash. It is settled by the turn's record in the owner's role-chat, once:
 * - recorded (the command `a2a/<taskId>/<turn>` appended the row): the task completes with the
 *   reply kept with the record, as the artifact `reply` and the final status message, so the
 *   caller gets what the owner saw;
 * - not recorded: the sweep takes that command id itself, so the turn can never be recorded later
 *   (a turn still running on another process then records nothing), and the task ends `failed`
 *   asking the caller to send again; a question the turn may have asked its owner is withdrawn.
 * The end is saved on the log (a task that ended meanwhile stays as it ended) and queued for the
 * caller's push configs.
 */
export async function sweepA2ATasksOnce(
  ctx: GoferContext,
  hub: A2AHub,
  opts: RecoveryOptions,
): Promise<RecoveryResult> {
  const now = ctx.now();
  const staleBefore = new Date(now.getTime() - opts.staleSeconds * 1000).toISOString();
  return transaction(ctx.orm, async (em) => {
    const [lock] = await sql<{ ok: boolean }>(
      em,
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok',
      [SWEEP_LOCK],
    );
    if (!lock?.ok) return { ran: false, completed: 0, failed: 0 };
    const stale = await sql<Candidate>(
      em,
      `select task_id, gofer_id, caller_id, task from gofers.a2a_tasks
        where state in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') and updated_at <= ?::timestamptz
        order by updated_at, task_id limit ?`,
      [staleBefore, BATCH],
    );
    const result = { ran: true, completed: 0, failed: 0 };
    for (const row of stale) {
      if (hub.running.has(row.task_id)) continue;
      const outcome = await settle(ctx, hub, row);
      if (outcome) result[outcome] += 1;
    }
    return result;
  });
}

async function settle(
  ctx: GoferContext,
  hub: A2AHub,
  row: Candidate,
): Promise<'completed' | 'failed' | null> {
  const task = TaskJson.fromJSON(row.task);
  const turn = userTurns(task);
  const reply = await recordedReply(ctx, task.id, turn);
  const agent = await a2aAgentOf(ctx.orm.em.fork(), row.gofer_id);
  if (!agent) return null;
  const scope = { goferId: row.gofer_id, accountId: agent.accountId };
  const timestamp = ctx.now().toISOString();
  const history = [...task.history, ...(task.status?.message ? [task.status.message] : [])];
  if (reply !== null) {
    const artifact = replyArtifact(task.id, turn, reply);
    const completed: Task = {
      ...task,
      history,
      artifacts: [...task.artifacts.filter((a) => a.artifactId !== artifact.artifactId), artifact],
      status: {
        state: TaskState.TASK_STATE_COMPLETED,
        message: agentMessage(task, reply, derivedId('a2a-recovered-reply', task.id, turn)),
        timestamp,
      },
    };
    if (!(await saveTask(ctx, scope, row.caller_id, completed))) return null;
    await tellCaller(hub, row.caller_id, completed, artifact);
    return 'completed';
  }
  // The turn may have asked its owner before the crash: nobody waits for that answer now.
  await withdrawCallerQuestion(ctx, {
    goferId: row.gofer_id,
    questionMessageId: questionIdOf(task.id, turn),
  });
  const failed: Task = {
    ...task,
    history,
    status: {
      state: TaskState.TASK_STATE_FAILED,
      message: agentMessage(task, INTERRUPTED, derivedId('a2a-interrupted', task.id, turn)),
      timestamp,
    },
  };
  if (!(await saveTask(ctx, scope, row.caller_id, failed))) return null;
  await tellCaller(hub, row.caller_id, failed, null);
  return 'failed';
}

/**
 * The reply recorded for the turn, or null when it was not recorded; then the command id is taken
 * with nothing appended, so a record of the turn that comes later appends nothing. The insert of
 * the id waits for a record in flight to commit or roll back, so the two never both win.
 */
async function recordedReply(ctx: GoferContext, taskId: string, turn: number): Promise<string | null> {
  const commandId = a2aTurnCommandId(taskId, turn);
  return transaction(ctx.orm, async (em) => {
    const recorded = await takeCommandId(em, ctx.store, commandId);
    if (recorded === null) {
      await recordCommand(em, ctx.store, commandId, []);
      return null;
    }
    if (recorded.eventIds.length === 0) return null;
    const [kept] = await sql<{ reply: string }>(
      em,
      'select reply from gofers.a2a_turn_replies where task_id = ? and turn = ?',
      [taskId, turn],
    );
    return kept?.reply ?? null;
  });
}

/**
 * Runs the sweep at once and then every `intervalMs` until stopped; a pass never overlaps the
 * previous one of this process, and a failed pass is logged and the next one runs as usual.
 */
export function startA2ARecovery(
  ctx: GoferContext,
  hub: A2AHub,
  opts: RecoveryOptions & { intervalMs: number },
  log: Pick<FastifyBaseLogger, 'info' | 'error'>,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = sweepA2ATasksOnce(ctx, hub, opts)
      .then((r) => {
        if (r.completed + r.failed > 0) log.info(r, 'A2A tasks cut off by a crash settled');
      })
      .catch((err: unknown) => log.error({ err }, 'A2A recovery sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.intervalMs);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
