import { randomUUID } from 'node:crypto';
import { Role, Task as TaskJson, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { sql } from '@oan/db';
import { silentLogger } from '@oan/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA2AHub, type A2AHub } from '../src/a2a/hub.ts';
import { INTERRUPTED, sweepA2ATasksOnce } from '../src/a2a/recovery.ts';
import { questionIdOf } from '../src/a2a/owner.ts';
import { saveTask } from '../src/a2a/taskStore.ts';
import { ScriptedBrain } from '../src/brain/scripted/scriptedBrain.ts';
import { publishOnA2A, recordA2ATurn } from '../src/commands/a2a.ts';
import { askOwnerForCaller } from '../src/commands/callerQuestions.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

/**
 * The A2A recovery sweep: a task whose turn a crash cut off (still working, its row unchanged for
 * longer than a turn takes, its turn running nowhere here) ends once, completed with the reply the
 * owner already saw when the turn was recorded, failed when it was not.
 */
let fleet: GoferFleet;
let hub: A2AHub;
let scope: { goferId: string; accountId: string };
const CALLER = `key:${'c'.repeat(64)}`;
const STALE = { staleSeconds: 60 };

beforeAll(async () => {
  fleet = await startGoferFleet({}, { callerBrain: new ScriptedBrain() });
  hub = createA2AHub({ orm: fleet.orm, config: fleet.config, log: silentLogger });
  const { accountId } = await fleet.account('dsh');
  const { goferId } = await createGofer(fleet.ctx, { accountId });
  await publishOnA2A(fleet.ctx, { accountId, goferId });
  scope = { goferId, accountId };
}, 120_000);
afterAll(async () => fleet?.close());

const text = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/** A task whose turn was under way (working) when its process died, its row `ageSeconds` old. */
async function cutOff(ageSeconds = 3600): Promise<Task> {
  const id = randomUUID();
  const contextId = randomUUID();
  const task: Task = {
    id,
    contextId,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
    history: [
      {
        messageId: randomUUID(),
        contextId,
        taskId: id,
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'text', value: 'Hello?' },
            mediaType: 'text/plain',
            filename: '',
            metadata: undefined,
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    ],
    artifacts: [],
    metadata: undefined,
  };
  await saveTask(fleet.ctx, scope, CALLER, task);
  await sql(
    fleet.orm.em.fork(),
    `update gofers.a2a_tasks set updated_at = now() - make_interval(secs => ?) where task_id = ?`,
    [ageSeconds, id],
  );
  return task;
}

/** The caller registered a push config on the task: what the sweep queues for it is kept. */
const pushTo = (taskId: string) =>
  sql(
    fleet.orm.em.fork(),
    `insert into gofers.a2a_push_configs (task_id, caller_id, config_id, url, wire_version, created_at)
     values (?, ?, 'hook', 'https://hooks.example.com/a2a', '1.0', now())`,
    [taskId, CALLER],
  );
/** The push notifications queued for the task, oldest first: what each tells. */
const queued = async (taskId: string) =>
  (
    await sql<{ body: string }>(
      fleet.orm.em.fork(),
      'select body from gofers.a2a_push_deliveries where task_id = ? order by id',
      [taskId],
    )
  ).map(({ body }) => {
    const b = JSON.parse(body) as Record<string, { status?: { state: string }; artifact?: { name: string } }>;
    return b.statusUpdate?.status?.state ?? `artifact:${b.artifactUpdate?.artifact?.name}`;
  });

const turnOf = (task: Task, answered: string) =>
  recordA2ATurn(fleet.ctx, { ...scope, taskId: task.id, turn: 1, caller: CALLER, asked: 'Hello?', answered });

async function stored(taskId: string): Promise<Task> {
  const [row] = await sql<{ task: unknown }>(
    fleet.orm.em.fork(),
    'select task from gofers.a2a_tasks where task_id = ?',
    [taskId],
  );
  return TaskJson.fromJSON(row!.task);
}

/** The task's saves on the log, by state. */
const saves = async (taskId: string) =>
  (await fleet.events()).filter((e) => e.streamId === `a2atask-${taskId}`).map((e) => String(e.data.state));

/** The owner's role-chat rows of kind a2a that quote `answered`. */
const a2aRows = async (answered: string) =>
  (await fleet.events()).filter(
    (e) =>
      e.type === 'ChatMessageAdded' &&
      e.data.kind === 'a2a' &&
      String(e.data.content).includes(JSON.stringify(answered)),
  ).length;

describe('a task cut off after its turn was recorded in the owner’s role-chat', () => {
  it('completes with the recorded reply, once, tells the caller, and a retried record doubles nothing', async () => {
    const task = await cutOff();
    await pushTo(task.id);
    const reply = `The reply the owner saw ${randomUUID()}`;
    expect((await turnOf(task, reply)).appended).toBe(true);

    expect(await sweepA2ATasksOnce(fleet.ctx, hub, STALE)).toMatchObject({ ran: true, completed: 1 });

    const done = await stored(task.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(text(done.status?.message)).toBe(reply);
    expect(done.artifacts.map((a) => [a.artifactId, a.name, text({ parts: a.parts } as Message)])).toEqual([
      [`${task.id}-reply-1`, 'reply', reply],
    ]);
    await turnOf(task, reply); // a retry of the record: the row is not doubled
    expect(await a2aRows(reply)).toBe(1);
    expect(await sweepA2ATasksOnce(fleet.ctx, hub, STALE)).toMatchObject({ completed: 0, failed: 0 });
    expect(await saves(task.id)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(await queued(task.id)).toEqual(['artifact:reply', 'TASK_STATE_COMPLETED']);
  });
});

describe('a task cut off before its turn was recorded', () => {
  it('fails asking to send again, tells the caller, and a late record of the turn appends nothing', async () => {
    const task = await cutOff();
    await pushTo(task.id);

    expect(await sweepA2ATasksOnce(fleet.ctx, hub, STALE)).toMatchObject({ ran: true, failed: 1 });

    const ended = await stored(task.id);
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(text(ended.status?.message)).toBe(INTERRUPTED);
    expect(ended.artifacts).toEqual([]);
    // The turn still running somewhere finds its record taken: the owner never sees it.
    const late = `A reply nobody waits for ${randomUUID()}`;
    expect((await turnOf(task, late)).appended).toBe(false);
    expect(await a2aRows(late)).toBe(0);
    expect(await saves(task.id)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_FAILED']);
    expect(await queued(task.id)).toEqual(['TASK_STATE_FAILED']);
  });
});

describe('a task cut off after its turn asked the owner, before it waited', () => {
  it('fails, and the question is withdrawn so the owner need not answer it', async () => {
    const task = await cutOff();
    const questionMessageId = questionIdOf(task.id, 1);
    await askOwnerForCaller(fleet.ctx, {
      goferId: scope.goferId,
      channel: 'a2a',
      caller: CALLER,
      callerText: 'Hello?',
      question: 'When are you free?',
      taskId: task.id,
      messageId: questionMessageId,
    });

    await sweepA2ATasksOnce(fleet.ctx, hub, STALE);

    expect((await stored(task.id)).status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const withdrawn = (await fleet.events()).filter(
      (e) => e.type === 'CallerQuestionWithdrawn' && e.data.questionMessageId === questionMessageId,
    );
    expect(withdrawn).toHaveLength(1);
  });
});

describe('a task whose turn still runs', () => {
  it('is left alone while it runs in this process', async () => {
    const task = await cutOff();
    hub.running.add(task.id);
    try {
      await sweepA2ATasksOnce(fleet.ctx, hub, STALE);
      expect((await stored(task.id)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    } finally {
      hub.running.delete(task.id);
    }
    await sweepA2ATasksOnce(fleet.ctx, hub, STALE);
    expect((await stored(task.id)).status?.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it('is left alone while its row changed within the stale time', async () => {
    const task = await cutOff(5);
    await sweepA2ATasksOnce(fleet.ctx, hub, STALE);
    expect((await stored(task.id)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
  });
});

describe('when two sweepers race over the same cut-off tasks', () => {
  it('settles each once and tells its caller once', async () => {
    const recorded = await cutOff();
    const reply = `Raced reply ${randomUUID()}`;
    await turnOf(recorded, reply);
    const lost = await cutOff();
    await pushTo(recorded.id);
    await pushTo(lost.id);
    const other = createA2AHub({ orm: fleet.orm, config: fleet.config, log: silentLogger });

    const results = await Promise.all([
      sweepA2ATasksOnce(fleet.ctx, hub, STALE),
      sweepA2ATasksOnce(fleet.ctx, other, STALE),
      sweepA2ATasksOnce(fleet.ctx, hub, STALE),
    ]);

    expect(results.reduce((n, r) => n + r.completed, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.failed, 0)).toBe(1);
    expect(await saves(recorded.id)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(await saves(lost.id)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_FAILED']);
    expect((await stored(recorded.id)).artifacts).toHaveLength(1);
    expect(await queued(recorded.id)).toEqual(['artifact:reply', 'TASK_STATE_COMPLETED']);
    expect(await queued(lost.id)).toEqual(['TASK_STATE_FAILED']);
  });
});
