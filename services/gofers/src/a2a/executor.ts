import { randomUUID } from 'node:crypto';
import { checkCredentials } from '@oan/auth';
import { sql } from '@oan/db';
import type { FastifyBaseLogger } from 'fastify';
import { Role, TaskState, Task as TaskJson, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import type { CallerBrain, CallerInput } from '../brain/types.ts';
import { recordA2ATurn } from '../commands/a2a.ts';
import { askOwnerForCaller, withdrawCallerQuestion } from '../commands/callerQuestions.ts';
import type { GoferContext } from '../commands/context.ts';
import { a2aAgentOf } from '../infra/a2aAgents.ts';
import { relayView } from '../infra/relayView.ts';
import type { RelayBudget } from '../relay/budget.ts';
import { callerOfCall } from './caller.ts';
import { agentMessage, questionIdOf, replyArtifact, userTurns } from './owner.ts';
import type { TaskScope } from './taskStore.ts';

/** The earlier turns of a context the brain sees (caller's words and the Gofer's answers). */
export const CONTEXT_HISTORY_TURNS = 20;
/** Not found or unpublished meanwhile: what a refused caller reads (never why). */
export const UNAVAILABLE = 'This agent is not available.';
/** A message without a text part. */
export const TEXT_ONLY = 'I read text only: send your message as a text part.';
/** A brain failure: nothing about its cause reaches the caller. */
export const FAILED = 'Sorry, I could not answer just now. Please try again later.';

export interface ExecutorDeps {
  ctx: GoferContext;
  brain: CallerBrain;
  budget: RelayBudget;
  logger: Pick<FastifyBaseLogger, 'warn'>;
  /** Tasks canceled while their turn ran, shared by every executor of the process. */
  canceled: Set<string>;
  /** Tasks whose turn runs in this process now (the recovery sweep leaves them alone). */
  running: Set<string>;
  /** Fault injection for the crash tests (GOFER_A2A_QA_FAULT, refused in production). */
  exitAfterRecord?: boolean;
}

/** The Gofer, asked again while its owner's answer is awaited, says only that. */
export const STILL_WAITING = "I'm still waiting for my owner's answer; I'll come back to you here.";

/**
 * What the Gofer does with one caller turn: it replies, or (ADR 0036) it asks its owner first and
 * the task waits in `input-required` with `content` (a holding line) until the owner answers.
 */
export type TurnDecision =
  { kind: 'reply'; content: string } | { kind: 'ask-owner'; content: string; question: string };

/** The Gofer's answer to one turn, from its public profile and the context's earlier turns. */
export async function answerTurn(brain: CallerBrain, input: CallerInput): Promise<TurnDecision> {
  const out = await brain.answerCaller(input);
  return out.askOwner
    ? { kind: 'ask-owner', content: out.content, question: out.askOwner }
    : { kind: 'reply', content: out.content };
}

const textOf = (m: Message | undefined) =>
  (m?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .filter(Boolean)
    .join('\n');

/**
 * The SDK's agent executor for one Gofer (ADR 0035): submitted → working → (admitted?) → the brain
 * → the turn recorded in the owner's role-chat → the reply as an artifact, then `completed` with
 * the reply as its message. Over a limit the task ends `rejected` saying why; a brain failure ends
 * it `failed` with a neutral message.
 */
export class GoferExecutor implements AgentExecutor {
  private readonly deps: ExecutorDeps;
  private readonly scope: TaskScope;
  constructor(deps: ExecutorDeps, scope: TaskScope) {
    this.deps = deps;
    this.scope = scope;
  }

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    this.deps.running.add(rc.taskId);
    try {
      await this.turn(rc, bus);
    } finally {
      this.deps.running.delete(rc.taskId);
    }
  }

  /**
   * One turn. A crash may end it anywhere; the recovery sweep (./recovery.ts) then settles the task
   * by whether the turn was recorded: before the record it fails (the owner saw nothing), after it
   * it completes with the recorded reply (the owner saw it). The sweep also takes the record's
   * command id, so this turn, if it still runs elsewhere, can no longer record.
   */
  private async turn(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const caller = callerOfCall(rc.context);
    const task: Task = rc.task ?? {
      id: rc.taskId,
      contextId: rc.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now(this.deps) },
      history: [rc.userMessage],
      artifacts: [],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    const status = (state: TaskState, text?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: task.id,
          contextId: task.contextId,
          status: {
            state,
            message: text === undefined ? undefined : agentMessage(task, text, randomUUID()),
            timestamp: now(this.deps),
          },
          metadata: undefined,
        }),
      );
    // The owner, not the caller, answers a waiting task: the caller hears it still waits.
    if (rc.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED)
      return status(TaskState.TASK_STATE_INPUT_REQUIRED, STILL_WAITING);
    status(TaskState.TASK_STATE_WORKING);
    const asked = textOf(rc.userMessage);
    // Text in, text out (the card's modes): a message with no text costs nothing.
    if (asked.trim() === '') return status(TaskState.TASK_STATE_REJECTED, TEXT_ONLY);
    try {
      const refused = await this.admit(caller);
      if (refused !== null) return status(TaskState.TASK_STATE_REJECTED, refused);
      const { state } = await relayView(
        this.deps.ctx.orm.em.fork(),
        this.deps.ctx.store.schema,
        this.scope.goferId,
      );
      if (state.status !== 'active') return status(TaskState.TASK_STATE_REJECTED, UNAVAILABLE);
      const { goferId } = this.scope;
      const { name, description, values, demands, locale } = state;
      const decision = await answerTurn(this.deps.brain, {
        gofer: { goferId, locale, name, description, values: [...values], demands: [...demands] },
        caller: caller.callerId,
        history: await this.contextHistory(caller.callerId, task),
        message: asked,
      });
      if (this.deps.canceled.has(task.id)) return;
      const turn = userTurns(task);
      if (decision.kind === 'ask-owner') {
        // The question row quotes the caller for the owner; the owner's next message completes
        // the task (A2AOwnerAnswers). One question per turn, so a retried turn asks once.
        await askOwnerForCaller(this.deps.ctx, {
          goferId,
          channel: 'a2a',
          caller: caller.callerId,
          callerText: asked,
          question: decision.question,
          taskId: task.id,
          messageId: questionIdOf(task.id, turn),
        });
        return status(TaskState.TASK_STATE_INPUT_REQUIRED, decision.content);
      }
      const { appended } = await recordA2ATurn(this.deps.ctx, {
        goferId,
        taskId: task.id,
        turn,
        caller: caller.callerId,
        asked,
        answered: decision.content,
      });
      if (!appended) return status(TaskState.TASK_STATE_REJECTED, UNAVAILABLE);
      if (this.deps.exitAfterRecord) process.kill(process.pid, 'SIGKILL');
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: replyArtifact(task.id, turn, decision.content),
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED, decision.content);
    } catch (err) {
      this.deps.logger.warn({ err, goferId: this.scope.goferId, taskId: task.id }, 'an A2A turn failed');
      if (!this.deps.canceled.has(task.id)) status(TaskState.TASK_STATE_FAILED, FAILED);
    } finally {
      this.deps.canceled.delete(task.id);
    }
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    this.deps.canceled.add(taskId);
    const [row] = await sql<{ context_id: string; state: string; task: unknown }>(
      this.deps.ctx.orm.em.fork(),
      'select context_id, state, task from gofers.a2a_tasks where task_id = ?',
      [taskId],
    );
    // A task waiting for its owner withdraws its question: the owner need not answer it, and the
    // Gofer's next caller question is asked.
    if (row?.state === 'TASK_STATE_INPUT_REQUIRED') {
      const turns = userTurns(TaskJson.fromJSON(row.task));
      await withdrawCallerQuestion(this.deps.ctx, {
        goferId: this.scope.goferId,
        questionMessageId: questionIdOf(taskId, turns),
      });
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: row?.context_id ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now(this.deps) },
        metadata: undefined,
      }),
    );
  }

  /**
   * Before anything is spent on a turn: the Gofer is still on A2A, its owner is not banned, and the
   * turn fits the caller's and its address's counts and the Gofer's and owner's budgets (shared with
   * the relay's callers).
   */
  private async admit(caller: { callerId: string; address: string }): Promise<string | null> {
    const em = this.deps.ctx.orm.em.fork();
    const row = await a2aAgentOf(em, this.scope.goferId);
    if (!row?.published) return UNAVAILABLE;
    const { banned } = await checkCredentials(em, [row.accountId], [], 0);
    if (banned.has(row.accountId)) return UNAVAILABLE;
    return this.deps.budget.spend({
      goferId: this.scope.goferId,
      accountId: row.accountId,
      caller: caller.callerId,
      address: caller.address,
    });
  }

  /** This caller's earlier turns in the context, oldest first: its words and the Gofer's replies. */
  private async contextHistory(callerId: string, current: Task): Promise<CallerInput['history']> {
    const rows = await sql<{ task: unknown }>(
      this.deps.ctx.orm.em.fork(),
      `select task from (select task, updated_at, task_id from gofers.a2a_tasks
         where gofer_id = ? and caller_id = ? and context_id = ? and task_id <> ?
         order by updated_at desc, task_id desc limit ?) newest order by updated_at, task_id`,
      [this.scope.goferId, callerId, current.contextId, current.id, CONTEXT_HISTORY_TURNS],
    );
    const history: CallerInput['history'] = [];
    for (const { task } of rows) {
      const t = TaskJson.fromJSON(task);
      const asked = t.history.filter((m) => m.role === Role.ROLE_USER).map(textOf);
      const reply = t.artifacts.find((a) => a.name === 'reply');
      for (const content of asked) history.push({ from: 'caller', content });
      if (reply) history.push({ from: 'gofer', content: textOf({ parts: reply.parts } as Message) });
    }
    return history.slice(-CONTEXT_HISTORY_TURNS * 2);
  }
}

const now = (deps: ExecutorDeps) => deps.ctx.now().toISOString();
