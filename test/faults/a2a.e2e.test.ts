import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { expectReplayRebuilds } from './scenario.ts';
import { query as rowsOf } from './verify.ts';

/**
 * A kill -9 of the gofers process while A2A turns are in flight: every task still ends, completed
 * when its turn was recorded in the owner's role-chat (with the reply the owner saw), failed when it
 * was not; no turn is lost for the owner or doubled, and a replay rebuilds the tasks.
 */
let fleet: TestFleet;
let owner: TestConnector;
let goferId: string;
let base: string;
const token = `fault-caller-${randomUUID()}`;
const callerId = `key:${createHash('sha256').update(token).digest('hex')}`;
const opts = { serviceParameters: { Authorization: `Bearer ${token}` } };

beforeAll(async () => {
  fleet = await TestFleet.start({
    only: ['auth', 'gofers', 'outbox', 'projector', 'gateway1', 'gateway2', 'agents1', 'agents2', 'edge'],
    env: {
      // Each turn's brain call is slow enough to be caught by a kill; a turn cut off for 2 s is settled.
      GOFER_A2A_QA_TURN_DELAY_MS: '30000',
      GOFER_A2A_STALE_SECONDS: '2',
      GOFER_A2A_CALLER_PER_MINUTE: '100',
      GOFER_A2A_ADDRESS_PER_MINUTE: '100',
    },
  });
  const a = await joinAccount(fleet.url, fleet.mailbox, `a2a-fault-${fleet.id}@example.com`, 'dsh');
  owner = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
  goferId = (await owner.rest<{ goferId: string }>('POST', '/gofers', {})).body.goferId;
  base = `${fleet.url}/a2a/gofers/${goferId}`;
  expect((await owner.rest('PUT', `/gofers/${goferId}/a2a`)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
});

const client = (): Promise<Client> => new ClientFactory().createFromUrl(`${base}/`);

const message = (text: string): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});

const textOf = (m: Pick<Message, 'parts'> | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/**
 * Sends each text, every other one streaming; the calls are left running (a kill breaks them) and
 * their outcomes are not what the test checks: the tasks are.
 */
async function sendAll(texts: string[]): Promise<void> {
  const c = await client();
  texts.forEach((text, i) => {
    const call =
      i % 2 === 0
        ? c.sendMessage(message(text), opts)
        : (async () => {
            for await (const e of c.sendMessageStream(message(text), opts)) void e;
          })();
    call.catch(() => undefined);
  });
}

const query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> =>
  rowsOf<R>(fleet.env.DATABASE_URL!, text, values);

/** The tasks of the texts, as the caller reads them (GetTask): one per text once they exist. */
async function tasksOf(texts: string[]): Promise<Map<string, Task>> {
  const rows = await query<{ task_id: string; asked: string }>(
    `select task_id, task #>> '{history,0,parts,0,text}' as asked from gofers.a2a_tasks
      where gofer_id = $1 and caller_id = $2`,
    [goferId, callerId],
  );
  const c = await client();
  const out = new Map<string, Task>();
  for (const r of rows.filter((row) => texts.includes(row.asked)))
    out.set(r.asked, await c.getTask({ tenant: '', id: r.task_id, historyLength: 0 }, opts));
  return out;
}

const WORKING = TaskState.TASK_STATE_WORKING;
const ENDED = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED];

describe('when the gofers process is killed -9 while A2A turns are in flight', () => {
  const midBrain = [1, 2, 3, 4].map((n) => `Tell me about your work, ${n} ${randomUUID()}`);
  const afterRecord = [1, 2, 3].map((n) => `What do you look for, ${n} ${randomUUID()}`);
  const all = [...midBrain, ...afterRecord];

  it('ends every task: failed when the turn was not recorded, completed with its reply when it was', async () => {
    // Killed from outside while every turn waits for the brain.
    await sendAll(midBrain);
    await waitFor(
      async () => {
        const tasks = await tasksOf(midBrain);
        return (
          tasks.size === midBrain.length && [...tasks.values()].every((t) => t.status?.state === WORKING)
        );
      },
      { what: 'the turns to be under way', timeoutMs: 20_000 },
    );
    // Started again so that it kills itself right after the first turn it records.
    await fleet.restart('gofers', {
      GOFER_A2A_QA_TURN_DELAY_MS: '1500',
      GOFER_A2A_QA_FAULT: 'exit-after-record',
    });
    await sendAll(afterRecord);
    const died = await Promise.race([
      fleet.running.get('gofers')!.exited.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 30_000)),
    ]);
    expect(died, 'the process to kill itself after recording a turn').toBe(true);
    await fleet.restart('gofers', { GOFER_A2A_QA_TURN_DELAY_MS: '0' });

    const ended = await waitFor(
      async () => {
        const tasks = await tasksOf(all);
        return [...tasks.values()].every((t) => ENDED.includes(t.status!.state)) ? tasks : undefined;
      },
      { what: 'every cut-off task to end', timeoutMs: 30_000 },
    );
    expect(ended.size).toBeGreaterThanOrEqual(midBrain.length + 1);
    for (const text of midBrain) expect(ended.get(text)?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const completed = [...ended.entries()].filter(
      ([, t]) => t.status?.state === TaskState.TASK_STATE_COMPLETED,
    );
    expect(completed.length, 'the turn recorded before the crash completed').toBeGreaterThanOrEqual(1);

    // The owner's role-chat: one row for each completed turn, none for a failed one.
    const rows = await query<{ content: string }>(
      `select data ->> 'content' as content from gofers.events
        where type = 'ChatMessageAdded' and data ->> 'goferId' = $1 and data ->> 'kind' = 'a2a'`,
      [goferId],
    );
    const rowsOf = (text: string) => rows.filter((r) => r.content.includes(JSON.stringify(text))).length;
    for (const [text, task] of ended) {
      const done = task.status?.state === TaskState.TASK_STATE_COMPLETED;
      expect(rowsOf(text), text).toBe(done ? 1 : 0);
      if (!done) continue;
      // One reply, the same as the final message; the task was completed once.
      expect(task.artifacts.map((a) => [a.name, textOf(a)])).toEqual([
        ['reply', textOf(task.status?.message)],
      ]);
      const saves = await query<{ n: string }>(
        `select count(*) as n from gofers.events
          where stream_id = $1 and data ->> 'state' = 'TASK_STATE_COMPLETED'`,
        [`a2atask-${task.id}`],
      );
      expect(saves[0]!.n).toBe('1');
    }

    // And the Gofer answers as before.
    const again = (await (await client()).sendMessage(message('Still there?'), opts)) as { task?: Task };
    expect((again.task ?? (again as Task)).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  }, 180_000);

  it('rebuilds the tasks byte for byte on a replay of the log', async () => {
    await waitFor(
      async () => {
        const [row] = await query<{ n: string }>(
          `select count(*) as n from gofers.a2a_tasks g left join read.a2a_tasks r using (task_id)
            where r.state is distinct from g.state`,
        );
        return row!.n === '0';
      },
      { what: 'the projector to catch up with the A2A tasks', timeoutMs: 20_000 },
    );
    await expectReplayRebuilds(fleet);
  }, 120_000);
});
