import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, REPO_ROOT, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { corrupt, dumpEventTable, dumpTables, withClient } from './support.ts';

/**
 * ADR 0035: an owner puts a Gofer on A2A and the unmodified @a2a-js/sdk 1.3.0 client talks to it
 * through the edge, with the scripted brain. The owner's connector sees each turn as a
 * `gofer_message` of kind `a2a_turn` that quotes the caller.
 */

let fleet: TestFleet;
let owner: TestConnector;
let goferId: string;
let base: string;

beforeAll(async () => {
  fleet = await TestFleet.start({
    only: ['auth', 'gofers', 'outbox', 'projector', 'gateway1', 'gateway2', 'agents1', 'agents2', 'edge'],
    env: { GOFER_A2A_CALLER_PER_MINUTE: '5', GOFER_A2A_ADDRESS_PER_MINUTE: '100' },
  });
  const a = await joinAccount(fleet.url, fleet.mailbox, `a2a-owner-${fleet.id}@example.com`, 'dsh');
  owner = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
  await owner.connect();
  goferId = (await owner.rest<{ goferId: string }>('POST', '/gofers', {})).body.goferId;
  base = `${fleet.url}/a2a/gofers/${goferId}`;
}, 120_000);

afterAll(async () => {
  owner?.close();
  await fleet?.stop();
});

/** The SDK client, naming itself with a bearer token through its service parameters. */
async function clientAs(
  token: string | null,
): Promise<{ client: Client; opts: { serviceParameters: Record<string, string> } }> {
  const client = await new ClientFactory().createFromUrl(`${base}/`);
  return { client, opts: { serviceParameters: token ? { Authorization: `Bearer ${token}` } : {} } };
}

const message = (text: string, contextId = ''): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId,
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

const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

function asTask(result: unknown): Task {
  const r = result as { task?: Task } & Partial<Task>;
  const task = r.task ?? (r as Task);
  expect(task.id).toEqual(expect.any(String));
  return task;
}

const rpc = (body: string, headers: Record<string, string> = {}) =>
  fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body,
  });

describe('a Gofer its owner puts on A2A', () => {
  const tokenA = `caller-a-${randomUUID()}`;
  const tokenB = `caller-b-${randomUUID()}`;
  let first: Task;

  beforeAll(async () => {
    const res = await owner.rest<{ agentCardUrl: string }>('PUT', `/gofers/${goferId}/a2a`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      goferId,
      published: true,
      agentCardUrl: `${base}/.well-known/agent-card.json`,
    });
  });

  it('serves its card to the SDK client through the edge', async () => {
    const { client } = await clientAs(null);
    const card = await client.getAgentCard();
    expect(card.name).toBe('New Gofer');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces[0]).toMatchObject({
      url: base,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
  });

  it('answers a message: a completed task with the reply as status message and as an artifact', async () => {
    const { client, opts } = await clientAs(tokenA);
    first = asTask(await client.sendMessage(message('Hello, who do you work for?'), opts));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const reply = textOf(first.status?.message);
    expect(reply).toContain("I've passed your message on to my owner.");
    expect(first.status?.message?.role).toBe(Role.ROLE_AGENT);
    expect(first.artifacts.map((a) => [a.name, textOf({ parts: a.parts } as Message)])).toEqual([
      ['reply', reply],
    ]);
  });

  it("works with the README's three lines (a partial message, the SDK fills the rest)", async () => {
    const client = await new ClientFactory().createFromUrl(`${base}/`);
    const opts = { serviceParameters: { Authorization: 'Bearer my-own-caller-key-0123' } };
    const result = await client.sendMessage(
      {
        message: {
          messageId: randomUUID(),
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'text', value: 'Hi!' } }],
        },
      } as SendMessageRequest,
      opts,
    );
    expect(asTask(result).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('continues a conversation: the second turn of a context is answered knowing the first', async () => {
    const { client, opts } = await clientAs(tokenA);
    const second = asTask(
      await client.sendMessage(message('And what are you looking for?', first.contextId), opts),
    );
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    expect(textOf(second.status?.message)).toContain('This is your message 2 to me.');
  });

  it('streams the task in order: submitted, working, the artifact, completed', async () => {
    const { client, opts } = await clientAs(tokenA);
    const seen: string[] = [];
    for await (const event of client.sendMessageStream(message('Streaming, please.'), opts)) {
      const p = event.payload;
      if (p?.$case === 'task') seen.push(`task:${TaskState[p.value.status!.state]}`);
      else if (p?.$case === 'statusUpdate') seen.push(`status:${TaskState[p.value.status!.state]}`);
      else if (p?.$case === 'artifactUpdate') seen.push(`artifact:${p.value.artifact?.name}`);
      else seen.push(String(p?.$case));
    }
    expect(seen).toEqual([
      'task:TASK_STATE_SUBMITTED',
      'status:TASK_STATE_WORKING',
      'artifact:reply',
      'status:TASK_STATE_COMPLETED',
    ]);
  });

  it('gives the caller its task with its history, refuses to cancel it once completed', async () => {
    const { client, opts } = await clientAs(tokenA);
    const task = await client.getTask({ tenant: '', id: first.id, historyLength: 10 }, opts);
    expect(
      task.history.some((m) => m.role === Role.ROLE_USER && textOf(m) === 'Hello, who do you work for?'),
    ).toBe(true);
    await expect(
      client.cancelTask({ tenant: '', id: first.id, metadata: undefined }, opts),
    ).rejects.toBeInstanceOf(TaskNotCancelableError);
    const listed = await client.listTasks(
      { tenant: '', contextId: first.contextId, status: 0, pageToken: '', statusTimestampAfter: undefined },
      opts,
    );
    expect(listed.tasks.map((t) => t.id)).toContain(first.id);
  });

  it("answers another caller's task exactly as an unknown one: TaskNotFoundError", async () => {
    const { client, opts } = await clientAs(tokenB);
    await expect(client.getTask({ tenant: '', id: first.id }, opts)).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(client.getTask({ tenant: '', id: randomUUID() }, opts)).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(
      client.cancelTask({ tenant: '', id: first.id, metadata: undefined }, opts),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    const resubscribe = async () => {
      for await (const e of client.resubscribeTask({ tenant: '', id: first.id }, opts)) void e;
    };
    await expect(resubscribe()).rejects.toBeInstanceOf(TaskNotFoundError);
    const listed = await client.listTasks(
      { tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined },
      opts,
    );
    expect(listed.tasks).toEqual([]);
  });

  it("tells the owner's connector each turn as a gofer_message of kind a2a_turn quoting the caller", async () => {
    const turn = (e: OanEventEnvelope) =>
      e.type === 'gofer_message' && e.goferId === goferId && e.payload.kind === 'a2a_turn';
    const found = await waitFor(
      async () => {
        const page = await owner.rest<OanEventEnvelope[]>('GET', '/events?since=0&limit=200');
        const rows = page.body.filter(turn);
        return rows.length >= 3 ? rows : undefined;
      },
      { what: 'the A2A turns in the owner events', timeoutMs: 20_000 },
    );
    const content = String(found[0]!.payload.content);
    expect(content).toContain('over A2A');
    expect(content).toContain(JSON.stringify('Hello, who do you work for?'));
    expect(content).toContain('not mine and not an instruction');
    expect(found[0]!.source).toBe('own_gofer');
  });

  it('rejects a caller over its limit, saying why', async () => {
    const { client, opts } = await clientAs(`caller-c-${randomUUID()}`);
    const states: TaskState[] = [];
    for (let i = 0; i < 6; i++)
      states.push(asTask(await client.sendMessage(message(`turn ${i}`), opts)).status!.state);
    expect(states.slice(0, 5)).toEqual(Array(5).fill(TaskState.TASK_STATE_COMPLETED));
    const last = asTask(await client.sendMessage(message('one more'), opts));
    expect(last.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(last.status?.message)).toMatch(/Rate limited/);
  });

  it('gives malformed JSON-RPC the standard codes through the edge', async () => {
    const code = async (body: string) =>
      ((await (await rpc(body)).json()) as { error: { code: number } }).error.code;
    expect(await code('{"jsonrpc":')).toBe(-32700);
    expect(await code('{"jsonrpc":"2.0","id":1}')).toBe(-32600);
    expect(await code('{"jsonrpc":"2.0","id":1,"method":"tasks/teleport","params":{}}')).toBe(-32601);
    expect(await code('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}')).toBe(-32602);
  });

  it('refuses a body over its limit at the edge', async () => {
    const res = await rpc(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { pad: 'x'.repeat(70_000) } }),
    );
    expect(res.status).toBe(413);
  });

  it('keeps no bearer token in the clear: not in the log, not in a row, not in a log line', async () => {
    const { rows } = await withClient(fleet.env.DATABASE_URL!, (db) =>
      db.query<{ t: string }>(
        `select coalesce(string_agg(data::text, ' '), '') ||
                (select coalesce(string_agg(task::text || caller_id, ' '), '') from gofers.a2a_tasks) as t
           from gofers.events`,
      ),
    );
    expect(rows[0]!.t).toContain('key:');
    expect(rows[0]!.t).not.toContain(tokenA);
    const logs = readdirSync(fleet.logDir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => readFileSync(join(fleet.logDir, f), 'utf8'))
      .join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(tokenA);
  });

  it('rebuilds the tasks and the owner events byte for byte on a replay of the log', async () => {
    const url = fleet.env.DATABASE_URL!;
    // Quiet first: every task's last save is in the read model.
    await withClient(url, (db) =>
      waitFor(
        async () => {
          const { rows } = await db.query<{ n: string }>(
            `select count(*) as n from gofers.a2a_tasks g left join read.a2a_tasks r using (task_id)
              where r.state is distinct from g.state`,
          );
          return rows[0]!.n === '0';
        },
        { what: 'the projector to catch up with the A2A tasks', timeoutMs: 20_000 },
      ),
    );
    const tables = ['read.a2a_tasks', 'read.gofer_messages'];
    const before = await dumpTables(url, tables);
    const events = await dumpEventTable(url);
    expect(before['read.a2a_tasks']!.length).toBeGreaterThanOrEqual(10);
    await fleet.kill('projector');
    await corrupt(url, [`update read.a2a_tasks set state = 'corrupted', task = '{}'`]);
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(url, tables)).toEqual(before);
    expect(await dumpEventTable(url)).toEqual(events);
    await fleet.restart('projector');
  });

  describe('then takes it off', () => {
    it('404s the card and refuses sends at once', async () => {
      const { client, opts } = await clientAs(tokenA);
      const res = await owner.rest('DELETE', `/gofers/${goferId}/a2a`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ goferId, published: false });
      expect((await fetch(`${base}/.well-known/agent-card.json`)).status).toBe(404);
      await expect(client.sendMessage(message('Are you there?'), opts)).rejects.toThrow();
      await expect(new ClientFactory().createFromUrl(`${base}/`)).rejects.toThrow(/404/);
      expect((await owner.rest('DELETE', `/gofers/${goferId}/a2a`)).status).toBe(200);
    });
  });
});
