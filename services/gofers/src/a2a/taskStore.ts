import { sql, type EntityManager } from '@oan/db';
import { a2aTaskStreamId } from '@oan/domain';
import { commandHandler } from '@oan/eventstore';
import { Task as TaskJson, TaskState, taskStateToJSON, type ListTasksRequest, type Task } from '@a2a-js/sdk';
import type { ListTasksResponse } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { GoferContext } from '../commands/context.ts';
import { a2aTaskDecider } from '../domain/a2aTask.ts';
import { IllegalStateError } from '../domain/errors.ts';
import { callerOf } from './caller.ts';

/** The newest messages a saved task keeps of its history (a long task is cut, oldest first). */
export const TASK_HISTORY_LIMIT = 40;
/** ListTasks: the SDK's default page and the protocol's largest. */
const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

/** The Gofer a task store serves, and its owner (the events' partition key). */
export interface TaskScope {
  goferId: string;
  accountId: string;
}

/** A task as it is saved: its protocol JSON, the history bounded. */
export function savedForm(task: Task): Task {
  return { ...task, history: task.history.slice(-TASK_HISTORY_LIMIT) };
}

const stateName = (task: Task) => taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);

/**
 * The SDK's task store over the log (ADR 0035): a save appends `A2ATaskSaved` to the task's stream
 * through its tiny decider (a terminal task never changes; an unchanged save appends nothing) and
 * writes the row of `gofers.a2a_tasks` in the same transaction, which `load` and `list` read.
 * Every read is scoped to this Gofer and to the calling identity: another caller's task is not
 * found, exactly like an unknown one.
 */
export class GoferTaskStore implements TaskStore {
  private readonly ctx: GoferContext;
  private readonly scope: TaskScope;

  constructor(ctx: GoferContext, scope: TaskScope) {
    this.ctx = ctx;
    this.scope = scope;
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    await saveTask(this.ctx, this.scope, callerOf(context), task);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const [row] = await sql<{ task: unknown }>(
      this.ctx.orm.em.fork(),
      'select task from gofers.a2a_tasks where task_id = ? and gofer_id = ? and caller_id = ?',
      [taskId, this.scope.goferId, callerOf(context)],
    );
    return row ? TaskJson.fromJSON(row.task) : undefined;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = Math.min(Math.max(params.pageSize ?? DEFAULT_PAGE, 1), MAX_PAGE);
    const offset = /^\d{1,9}$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const where = ['gofer_id = ?', 'caller_id = ?'];
    const args: unknown[] = [this.scope.goferId, callerOf(context)];
    if (params.contextId) {
      where.push('context_id = ?');
      args.push(params.contextId);
    }
    if (params.status) {
      where.push('state = ?');
      args.push(taskStateToJSON(params.status));
    }
    const em = this.ctx.orm.em.fork();
    const [count] = await sql<{ n: string }>(
      em,
      `select count(*) as n from gofers.a2a_tasks where ${where.join(' and ')}`,
      args,
    );
    const rows = await sql<{ task: unknown }>(
      em,
      `select task from gofers.a2a_tasks where ${where.join(' and ')}
        order by updated_at desc, task_id limit ? offset ?`,
      [...args, pageSize, offset],
    );
    const totalSize = Number(count?.n ?? 0);
    const next = offset + rows.length;
    return {
      tasks: rows.map((r) => TaskJson.fromJSON(r.task)),
      nextPageToken: next < totalSize ? String(next) : '',
      pageSize,
      totalSize,
    };
  }
}

/**
 * Appends the task's saved form (unless nothing changed) and writes its row, in one transaction.
 * A save of a terminal task is dropped: it stays as it ended (a cancel that raced the reply wins),
 * and the answer is false.
 */
export async function saveTask(
  ctx: GoferContext,
  scope: TaskScope,
  callerId: string,
  task: Task,
): Promise<boolean> {
  const saved = savedForm(task);
  const state = stateName(saved);
  const json = JSON.stringify(TaskJson.toJSON(saved));
  try {
    await a2aTaskCommands(ctx)(
      a2aTaskStreamId(saved.id),
      {
        type: 'SaveA2ATask',
        data: {
          taskId: saved.id,
          goferId: scope.goferId,
          accountId: scope.accountId,
          callerId,
          contextId: saved.contextId,
          state,
          task: json,
        },
      },
      {
        inline: async (em, appended) => {
          if (appended.length > 0) await writeTaskRow(em, ctx, saved, state, json);
        },
      },
    );
  } catch (err) {
    if (err instanceof IllegalStateError && err.code === 'A2A_TASK_TERMINAL') return false;
    throw err;
  }
  return true;
  function writeTaskRow(em: EntityManager, c: GoferContext, t: Task, s: string, j: string) {
    return sql(
      em,
      `insert into gofers.a2a_tasks (task_id, gofer_id, caller_id, context_id, state, task, updated_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?)
       on conflict (task_id) do update set state = excluded.state, task = excluded.task, updated_at = excluded.updated_at`,
      [t.id, scope.goferId, callerId, t.contextId, s, j, c.now().toISOString()],
    );
  }
}

/** The A2A task aggregate's command handler, keyed by the Gofer owner's account. */
const a2aTaskCommands = (ctx: GoferContext) =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    decider: a2aTaskDecider,
    now: ctx.now,
    partitionKey: (_state, _events, command) => command.data.accountId,
  });

/** The tasks of a Gofer that have not ended (an unpublication cancels them). */
export async function openTasksOf(
  em: EntityManager,
  goferId: string,
): Promise<{ callerId: string; task: Task }[]> {
  const rows = await sql<{ caller_id: string; task: unknown }>(
    em,
    `select caller_id, task from gofers.a2a_tasks where gofer_id = ?
      and state not in ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')`,
    [goferId],
  );
  return rows.map((r) => ({ callerId: r.caller_id, task: TaskJson.fromJSON(r.task) }));
}
