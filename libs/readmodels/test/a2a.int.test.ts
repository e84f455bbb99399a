import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { A2AEvent } from '@oan/domain';
import { a2aProjection } from '../src/a2a/index.ts';
import { a2aTaskOf } from './support/a2a.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const taskId = randomUUID();
const task = a2aTaskOf(taskId, randomUUID(), randomUUID());
const spec = projectionSpec(a2aProjection, {
  rows: { a2a_tasks: 'select * from read.a2a_tasks order by task_id' },
});
const row = async () =>
  (
    await spec.query<{ state: string; task: { status: { state: string } } }>(
      'select state, task from read.a2a_tasks where task_id = ?',
      [taskId],
    )
  )[0];

describe('read.a2a_tasks, the A2A tasks as the log tells them', () => {
  const submitted = task.A2ATaskSaved();
  const completed = task.A2ATaskSaved({
    state: 'TASK_STATE_COMPLETED',
    task: JSON.stringify({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } }),
  });

  it('keeps the last save, notifies no one, and an older save applied again changes nothing', async () => {
    expect(await spec.given(submitted, completed)).toEqual([]);
    expect(await row()).toMatchObject({
      state: 'TASK_STATE_COMPLETED',
      task: { status: { state: 'TASK_STATE_COMPLETED' } },
    });
    await spec.when(submitted);
    expect((await row())?.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('an A2A task', () => {
  spec.appliedTwice<A2AEvent>({
    A2ATaskSaved: {
      event: () => a2aTaskOf(randomUUID(), 'g', 'a').A2ATaskSaved({ state: 'TASK_STATE_WORKING' }),
    },
  });
});
