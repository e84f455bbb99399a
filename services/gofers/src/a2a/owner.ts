import { createHash } from 'node:crypto';
import { sql } from '@oan/db';
import { Role, Task as TaskJson, TaskState, type Artifact, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { GoferContext } from '../commands/context.ts';
import { a2aAgentOf } from '../infra/a2aAgents.ts';
import type { OwnerAnswer, OwnerAnswers } from '../reactors/ownerAnswers.ts';
import { CallerUser } from './caller.ts';
import type { A2AHub } from './hub.ts';
import { saveTask } from './taskStore.ts';

/**
 * The role-chat row that asks the owner for turn `turn` of a task: one id per turn, so a retried
 * turn asks once, and a cancel finds the question it withdraws.
 */
export const questionIdOf = (taskId: string, turn: number) => derivedId('a2a-question', taskId, turn);

/** A UUID's shape (version 8: custom) over a label, a task and a turn: the same ids on a retry. */
export function derivedId(label: string, taskId: string, turn: number): string {
  const h = createHash('sha256').update(`${label}/${taskId}/${turn}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** An agent message of the task with one text part. */
export function agentMessage(task: Pick<Task, 'id' | 'contextId'>, text: string, messageId: string): Message {
  return {
    messageId,
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The reply of turn `turn` as the artifact a completed turn carries (name `reply`). */
export function replyArtifact(taskId: string, turn: number, text: string): Artifact {
  return {
    artifactId: `${taskId}-reply-${turn}`,
    name: 'reply',
    description: '',
    parts: [
      { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
    ],
    metadata: undefined,
    extensions: [],
  };
}

export const userTurns = (task: Task) => task.history.filter((m) => m.role === Role.ROLE_USER).length;

/**
 * ADR 0036's port for A2A: the owner's answer completes the task that waits for it in
 * `input-required`. The answer, word for word, is the reply (an artifact named `reply` and the final
 * status message); the task is saved on the log first, then told to a subscriber of this process and
 * queued for the caller's push configs. Idempotent on the question: a task that already completed
 * with its reply answers `delivered` again and changes nothing; a task that ended otherwise (canceled,
 * unpublished) is `delivered: false`, and the owner is told the caller had gone.
 */
export class A2AOwnerAnswers implements OwnerAnswers {
  private readonly ctx: GoferContext;
  private readonly hub: A2AHub;
  constructor(deps: { ctx: GoferContext; hub: A2AHub }) {
    this.ctx = deps.ctx;
    this.hub = deps.hub;
  }

  async answered(a: OwnerAnswer): Promise<{ delivered: boolean }> {
    const em = this.ctx.orm.em.fork();
    const [row] = await sql<{ caller_id: string; state: string; task: unknown }>(
      em,
      'select caller_id, state, task from gofers.a2a_tasks where task_id = ? and gofer_id = ?',
      [a.taskId, a.goferId],
    );
    if (!row) return { delivered: false };
    const task = TaskJson.fromJSON(row.task);
    const turn = userTurns(task);
    const artifact = replyArtifact(task.id, turn, a.answer);
    if (row.state === 'TASK_STATE_COMPLETED')
      return { delivered: task.artifacts.some((x) => x.artifactId === artifact.artifactId) };
    if (row.state !== 'TASK_STATE_INPUT_REQUIRED' || questionIdOf(task.id, turn) !== a.questionMessageId)
      return { delivered: false };
    const agent = await a2aAgentOf(em, a.goferId);
    if (!agent?.published) return { delivered: false };
    const reply = agentMessage(task, a.answer, derivedId('a2a-owner-answer', task.id, turn));
    const completed: Task = {
      ...task,
      history: [...task.history, ...(task.status?.message ? [task.status.message] : [])],
      artifacts: [...task.artifacts, artifact],
      status: { state: TaskState.TASK_STATE_COMPLETED, message: reply, timestamp: a.answeredAt },
    };
    // A cancel that ended the task meanwhile wins: the caller is told nothing, the owner that it left.
    const scope = { goferId: a.goferId, accountId: agent.accountId };
    if (!(await saveTask(this.ctx, scope, row.caller_id, completed))) return { delivered: false };
    await tellCaller(this.hub, row.caller_id, completed, artifact);
    return { delivered: true };
  }
}

/**
 * Tells a task's end that came from no call of the caller (an owner's answer, the recovery sweep):
 * a subscriber of this process (SubscribeToTask) sees it and the bus is released, and it is queued
 * for the caller's push configs, the reply artifact (if any) before the final status.
 */
export async function tellCaller(
  hub: A2AHub,
  callerId: string,
  ended: Task,
  artifact: Artifact | null,
): Promise<void> {
  const ids = { taskId: ended.id, contextId: ended.contextId, metadata: undefined };
  const artifactUpdate = artifact ? { ...ids, artifact, append: false, lastChunk: true } : null;
  const statusUpdate = { ...ids, status: ended.status };
  const context = new ServerCallContext({ user: new CallerUser({ callerId, address: '' }) });
  const bus = hub.buses.getByTaskId(ended.id, context);
  if (bus) {
    if (artifactUpdate) bus.publish(AgentEvent.artifactUpdate(artifactUpdate));
    bus.publish(AgentEvent.statusUpdate(statusUpdate));
    bus.finished();
    hub.buses.cleanupByTaskId(ended.id, context);
  }
  const { sender } = hub.push;
  if (artifactUpdate)
    await sender.sendFor(callerId, { payload: { $case: 'artifactUpdate', value: artifactUpdate } }, ended);
  await sender.sendFor(callerId, { payload: { $case: 'statusUpdate', value: statusUpdate } }, ended);
}
