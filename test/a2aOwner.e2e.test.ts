import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { chat, type ClaimedJob } from './runtimeJobs.ts';
import { banAccount, withClient } from './support.ts';

/**
 * ADR 0035 and 0036 through the edge with the unmodified @a2a-js/sdk 1.3.0 client: an A2A caller
 * asks what only the owner can answer, the task waits in `input-required`, the Gofer's question
 * reaches the owner (a job for the owner's runtime, or a message in the role-chat), and the owner's
 * answer completes the task, told to a subscriber and pushed, signed, to the caller's endpoint.
 */
let fleet: TestFleet;
let owner: TestConnector;
let goferId: string;
let base: string;
let runtimeId: string;

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}
const deliveries: Delivery[] = [];
let receiver: Server;
let hookUrl: string;
/** How many of the next deliveries the receiver answers with a 500. */
let failNext = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end();
      } else res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  fleet = await TestFleet.start({
    only: ['auth', 'gofers', 'runtimes', 'outbox', 'projector', 'gateway1', 'gateway2', 'edge'],
    env: {
      GOFER_A2A_PUSH_ALLOW_LOOPBACK: 'true',
      GOFER_A2A_PUSH_RETRY_BASE_MS: '200',
      GOFER_A2A_PUSH_POLL_MS: '100',
    },
  });
  const a = await joinAccount(fleet.url, fleet.mailbox, `a2a-ask-${fleet.id}@example.com`, 'dsh');
  owner = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
  goferId = (await owner.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body.goferId;
  expect((await owner.rest('PUT', `/gofers/${goferId}/a2a`)).status).toBe(200);
  base = `${fleet.url}/a2a/gofers/${goferId}`;
  const runtime = await owner.rest<{ runtimeId: string }>('POST', '/runtimes', {
    name: 'desk',
    policy: { types: ['gofer_question'] },
  });
  expect(runtime.status).toBe(201);
  runtimeId = runtime.body.runtimeId;
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
  await new Promise((r) => receiver?.close(r));
});

async function clientAs(
  token: string,
): Promise<{ client: Client; opts: { serviceParameters: Record<string, string> } }> {
  const client = await new ClientFactory().createFromUrl(`${base}/`);
  return { client, opts: { serviceParameters: { Authorization: `Bearer ${token}` } } };
}

const message = (text: string, push?: { url: string; token: string }): SendMessageRequest => ({
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
  configuration: push
    ? {
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url: push.url,
          token: push.token,
          authentication: undefined,
        },
        returnImmediately: false,
      }
    : undefined,
  metadata: undefined,
});

const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const asTask = (result: unknown): Task => {
  const r = result as { task?: Task } & Partial<Task>;
  return r.task ?? (r as Task);
};

const claim = (worker: string) =>
  waitFor(
    async () =>
      (
        await owner.rest<{ job: ClaimedJob | null }>('POST', `/runtimes/${runtimeId}/claim`, {
          worker,
          wait: 5,
        })
      ).body.job ?? undefined,
    { timeoutMs: 30_000, what: "the Gofer's question as a job" },
  );

describe("an A2A caller's question only the owner can answer", () => {
  const token = `asker-${randomUUID()}`;
  const pushToken = `push-secret-${randomUUID()}`;
  let waiting: Task;

  it('waits in input-required with a holding line, and the owner gets the question as a job', async () => {
    const { client, opts } = await clientAs(token);
    failNext = 1; // the first push is refused once: it must come again
    waiting = asTask(
      await client.sendMessage(
        message('What is your price for a weekend?', { url: hookUrl, token: pushToken }),
        opts,
      ),
    );
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(waiting.status?.message)).toContain("I'll ask my owner and come back to you");

    const job = await claim('w1');
    expect(job.event).toMatchObject({
      type: 'gofer_question',
      goferId,
      payload: { kind: 'caller_question' },
    });
    expect(String(job.event.payload.content)).toContain('"What is your price for a weekend?"');

    // A subscriber while the task waits, and a repeat of the caller meanwhile, which changes nothing.
    const sub = client.resubscribeTask({ tenant: '', id: waiting.id }, opts);
    const seen: string[] = [];
    const streamed = (async () => {
      for await (const ev of sub) {
        const p = ev.payload;
        if (p?.$case === 'statusUpdate') seen.push(`status:${p.value.status?.state}`);
        else if (p?.$case) seen.push(p.$case);
      }
    })();

    const done = await owner.rest<{ reply: { status: number } }>(
      'POST',
      `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`,
      {
        leaseOwner: 'w1',
        version: job.version,
        outcome: 'handled',
        reply: { content: '450 EUR, meals included.' },
      },
    );
    expect(done.status).toBe(200);

    const completed = await waitFor(
      async () => {
        const t = await client.getTask({ tenant: '', id: waiting.id }, opts);
        return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
      },
      { timeoutMs: 30_000, what: 'the task completed by the owner' },
    );
    expect(textOf(completed.status?.message)).toBe('450 EUR, meals included.');
    expect(completed.artifacts.map((a) => [a.name, textOf({ parts: a.parts } as Message)])).toEqual([
      ['reply', '450 EUR, meals included.'],
    ]);
    await streamed;
    expect(seen.slice(-2)).toEqual(['artifactUpdate', `status:${TaskState.TASK_STATE_COMPLETED}`]);

    // The owner is told the answer was passed on.
    await waitFor(
      async () => (await chat(owner, goferId)).find((m) => m.content.includes('passed your answer on')),
      { timeoutMs: 20_000, what: "the Gofer's thanks in the role-chat" },
    );
  });

  it('pushes every event of the task to the caller, signed with its token, the refused one again', async () => {
    const forTask = () => deliveries.filter((d) => d.body.includes(waiting.id));
    const last = await waitFor(
      async () =>
        forTask().find((d) => d.body.includes('450 EUR, meals included.') && d.body.includes('COMPLETED')),
      { timeoutMs: 30_000, what: 'the completion pushed' },
    );
    const wh = new Webhook(new TextEncoder().encode(pushToken), { format: 'raw' });
    for (const d of forTask()) {
      expect(d.headers['content-type']).toBe('application/a2a+json');
      expect(d.headers['x-a2a-notification-token']).toBe(pushToken);
      expect(() =>
        wh.verify(d.body, {
          'webhook-id': String(d.headers['webhook-id']),
          'webhook-timestamp': String(d.headers['webhook-timestamp']),
          'webhook-signature': String(d.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    const ids = forTask().map((d) => String(d.headers['webhook-id']));
    // The first was refused once and came again under its id; every other id arrived once.
    expect(ids[0]).toBe(ids[1]);
    expect(new Set(ids).size).toBe(ids.length - 1);
    expect(ids.at(-1)).toBe(String(last.headers['webhook-id']));
  });

  it('answers a second question from the role-chat, when the owner writes there', async () => {
    const { client, opts } = await clientAs(token);
    const task = asTask(
      await client.sendMessage(message('Can we meet on Friday? When are you available?'), opts),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await waitFor(
      async () => (await chat(owner, goferId)).find((m) => m.content.includes('"Can we meet on Friday?')),
      { timeoutMs: 20_000, what: 'the question in the role-chat' },
    );
    const posted = await owner.rest('POST', `/gofers/${goferId}/chat/messages`, { content: 'Friday at 10.' });
    expect(posted.status).toBeLessThan(300);
    const completed = await waitFor(
      async () => {
        const t = await client.getTask({ tenant: '', id: task.id }, opts);
        return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
      },
      { timeoutMs: 30_000, what: 'the task completed from the role-chat' },
    );
    expect(textOf(completed.status?.message)).toBe('Friday at 10.');
  });

  it('withdraws the question when the caller cancels, and the owner is told not to answer', async () => {
    const { client, opts } = await clientAs(token);
    const task = asTask(await client.sendMessage(message('How can I contact your owner by phone?'), opts));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined }, opts);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await waitFor(
      async () =>
        (await chat(owner, goferId)).find((m) => m.content.includes('no need to answer that question')),
      { timeoutMs: 20_000, what: 'the withdrawal in the role-chat' },
    );
    // The owner's next message goes to no one: the canceled task stays canceled.
    await owner.rest('POST', `/gofers/${goferId}/chat/messages`, { content: 'Call me at 555.' });
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await client.getTask({ tenant: '', id: task.id }, opts);
    expect(after.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // Not in any text the task holds (its messages, its status, its artifacts), nor anywhere in it as
    // written; the ids are random hex and may hold "555" themselves.
    const texts = [
      ...after.history,
      after.status?.message,
      ...after.artifacts.map((a) => ({ parts: a.parts }) as Message),
    ].map(textOf);
    expect(texts.join('\n')).not.toContain('555');
    expect(JSON.stringify(after)).not.toContain('Call me at');
  });
});

describe('when the owner of a Gofer on A2A is banned', () => {
  it('the Gofer leaves A2A at once, and a task waiting for that owner ends canceled', async () => {
    const b = await joinAccount(fleet.url, fleet.mailbox, `a2a-banned-${fleet.id}@example.com`, 'dsh');
    const banned = new TestConnector({ baseUrl: fleet.url, token: b.apiKey });
    const gofer = (await banned.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body.goferId;
    expect((await banned.rest('PUT', `/gofers/${gofer}/a2a`)).status).toBe(200);
    const client = await new ClientFactory().createFromUrl(`${fleet.url}/a2a/gofers/${gofer}/`);
    const opts = { serviceParameters: { Authorization: `Bearer caller-of-banned-${randomUUID()}` } };
    const task = asTask(await client.sendMessage(message('What is your price for a week?'), opts));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    banAccount(fleet, b.userId);
    const card = await fetch(`${fleet.url}/a2a/gofers/${gofer}/.well-known/agent-card.json`);
    expect(card.status).toBe(404);
    try {
      const ended = await withClient(fleet.env.DATABASE_URL!, (db) =>
        waitFor(
          async () => {
            const { rows } = await db.query<{ state: string; published: boolean }>(
              `select t.state, a.published from gofers.a2a_tasks t join gofers.a2a_agents a using (gofer_id)
                where t.task_id = $1`,
              [task.id],
            );
            return rows[0]?.state === 'TASK_STATE_CANCELED' ? rows[0] : undefined;
          },
          { timeoutMs: 30_000, what: "the banned owner's waiting task to end" },
        ),
      );
      expect(ended.published).toBe(false);
    } finally {
      banned.close();
    }
  });
});
