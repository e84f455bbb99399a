import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallerUser } from '../src/a2a/caller.ts';
import { GoferTaskStore } from '../src/a2a/taskStore.ts';
import { ScriptedBrain } from '../src/brain/scripted/scriptedBrain.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { publishOnA2A, recordA2ATurn } from '../src/commands/a2a.ts';
import { deleteGofer } from '../src/commands/deleteGofer.ts';
import { postUserMessage } from '../src/commands/postUserMessage.ts';
import { appendGoferEvents } from './appendEvents.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

/**
 * ADR 0035: a published Gofer as an A2A agent, through `app.inject`: the owner's switch, the card,
 * JSON-RPC with the scripted brain, and the task store over the log.
 */
const CANARY = `CANARY-${randomUUID()}`;
let fleet: GoferFleet;
let owner: { accountId: string; headers: Record<string, string> };
let other: { accountId: string; headers: Record<string, string> };
let goferId: string;

beforeAll(async () => {
  fleet = await startGoferFleet({}, { callerBrain: new ScriptedBrain() });
  owner = await fleet.account('dsh');
  other = await fleet.account('dsh');
  goferId = (await createGofer(fleet.ctx, { accountId: owner.accountId })).goferId;
  // A private word in the owner's chat: it must never reach a caller or the card.
  await postUserMessage(fleet.ctx, {
    accountId: owner.accountId,
    goferId,
    content: `My secret is ${CANARY}`,
    attachmentsEnabled: false,
  });
  // And in a document of the owner's, parsed and ready as the brain's knowledge.
  const at = new Date().toISOString();
  const file = { goferId, accountId: owner.accountId, attachmentId: randomUUID() };
  await appendGoferEvents(fleet.ctx, goferId, owner.accountId, [
    {
      type: 'AttachmentAdded',
      data: {
        ...file,
        kind: 'document',
        name: 'notes.txt',
        mimeType: 'text/plain',
        size: 40,
        width: null,
        height: null,
        storageKey: `k/${file.attachmentId}`,
        ragStatus: 'processing',
        createdAt: at,
      },
    },
    {
      type: 'AttachmentRagStatusChanged',
      data: { ...file, ragStatus: 'ready', knowledge: `The document says ${CANARY}`, changedAt: at },
    },
  ]);
}, 120_000);
afterAll(async () => fleet?.close());

const put = (id: string, headers: Record<string, string>) =>
  fleet.app.inject({ method: 'PUT', url: `/api/v1/gofers/${id}/a2a`, headers });
const del = (id: string, headers: Record<string, string>) =>
  fleet.app.inject({ method: 'DELETE', url: `/api/v1/gofers/${id}/a2a`, headers });
const card = (id: string) =>
  fleet.app.inject({ method: 'GET', url: `/a2a/gofers/${id}/.well-known/agent-card.json` });
const rpc = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  fleet.app.inject({
    method: 'POST',
    url: `/a2a/gofers/${id}`,
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
const send = (id: string, text: string, headers: Record<string, string> = {}, contextId?: string) =>
  rpc(
    id,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text }],
          ...(contextId ? { contextId } : {}),
        },
      },
    },
    headers,
  );

describe('a Gofer not on A2A', () => {
  it('has no card and refuses sends with one plain 404', async () => {
    expect((await card(goferId)).statusCode).toBe(404);
    const res = await send(goferId, 'hello');
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe((await card(randomUUID())).body);
  });

  it('refuses another account and an unknown Gofer with the one 403', async () => {
    const foreign = await put(goferId, other.headers);
    const unknown = await put(randomUUID(), other.headers);
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).toBe(unknown.body);
    expect((await del(goferId, other.headers)).statusCode).toBe(403);
  });
});

describe('a Gofer its owner puts on A2A', () => {
  beforeAll(async () => {
    const res = await put(goferId, owner.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      goferId,
      published: true,
      agentCardUrl: `http://127.0.0.1:8080/a2a/gofers/${goferId}/.well-known/agent-card.json`,
    });
  });

  it('is idempotent: a second PUT appends nothing', async () => {
    const before = (await fleet.events()).filter((e) => e.type === 'GoferA2APublished').length;
    expect((await put(goferId, owner.headers)).statusCode).toBe(200);
    expect((await fleet.events()).filter((e) => e.type === 'GoferA2APublished').length).toBe(before);
  });

  it('serves a card of its public profile only', async () => {
    const res = await card(goferId);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(CANARY);
    expect(res.json()).toMatchObject({
      name: 'New Gofer',
      capabilities: { streaming: true, pushNotifications: true },
      defaultInputModes: ['text/plain'],
      supportedInterfaces: [
        {
          url: `http://127.0.0.1:8080/a2a/gofers/${goferId}`,
          protocolBinding: 'JSONRPC',
          protocolVersion: '1.0',
        },
      ],
      skills: [expect.objectContaining({ id: 'looking-for' })],
    });
  });

  it('answers a message with a completed task, records the turn once in the role-chat, and leaks nothing', async () => {
    const res = await send(goferId, 'Who are you?', { authorization: 'Bearer caller-one-token-0001' });
    expect(res.statusCode).toBe(200);
    const { task } = res.json().result as { task: Record<string, unknown> };
    expect(task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(JSON.stringify(task)).toContain("I've passed your message on to my owner.");
    expect(res.body).not.toContain(CANARY);
    const turns = (await fleet.events()).filter(
      (e) => e.type === 'ChatMessageAdded' && (e.data as { kind: string | null }).kind === 'a2a',
    );
    expect(turns).toHaveLength(1);
    expect((turns[0]!.data as { content: string }).content).toContain('"Who are you?"');
    const saved = (await fleet.events()).filter((e) => e.type === 'A2ATaskSaved');
    const states = saved
      .filter((e) => e.streamId === `a2atask-${String(task.id)}`)
      .sort((a, b) => Number(BigInt(a.position) - BigInt(b.position)))
      .map((e) => (e.data as { state: string }).state);
    // Submitted, working, working with the reply artifact, completed: one event per change.
    expect(states).toEqual([
      'TASK_STATE_SUBMITTED',
      'TASK_STATE_WORKING',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
  });

  it('gives the standard JSON-RPC codes to malformed requests', async () => {
    const code = async (body: unknown) => (await rpc(goferId, body)).json().error.code as number;
    expect(await code('{not json')).toBe(-32700);
    expect(await code({ jsonrpc: '1.0', method: 'SendMessage', id: 1 })).toBe(-32600);
    expect(await code([])).toBe(-32600);
    expect(await code({ jsonrpc: '2.0', method: 'NoSuchMethod', id: 1, params: {} })).toBe(-32601);
    expect(await code({ jsonrpc: '2.0', method: 'GetTask', id: 1, params: 'x' })).toBe(-32602);
    expect(await code({ jsonrpc: '2.0', method: 'GetTask', id: 1, params: { id: randomUUID() } })).toBe(
      -32001,
    );
  });

  it('hides the cause of an internal error (a NUL byte the database refuses)', async () => {
    const res = await rpc(goferId, { jsonrpc: '2.0', method: 'GetTask', id: 7, params: { id: 'a\u0000b' } });
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error' } });
  });

  it('rejects a message without text before spending anything on it', async () => {
    const res = await rpc(goferId, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { a: 1 } }] } },
    });
    expect(res.json().result.task.status).toMatchObject({
      state: 'TASK_STATE_REJECTED',
      message: { parts: [{ text: 'I read text only: send your message as a text part.' }] },
    });
  });

  it('refuses a request without the A2A-Version it serves (1.0)', async () => {
    const res = await fleet.app.inject({
      method: 'POST',
      url: `/a2a/gofers/${goferId}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    });
    expect(res.json().error.code).toBe(-32009);
  });

  it('refuses a malformed bearer token', async () => {
    expect((await send(goferId, 'hi', { authorization: 'Bearer short' })).statusCode).toBe(401);
  });
});

describe('the task store', () => {
  const context = (callerId: string) =>
    new ServerCallContext({ user: new CallerUser({ callerId, address: '10.0.0.1' }) });
  const taskOf = (state: TaskState, contextId = 'ctx-1'): Task => ({
    id: randomUUID(),
    contextId,
    status: { state, message: undefined, timestamp: new Date().toISOString() },
    history: Array.from({ length: 50 }, (_, i) => ({
      messageId: `m${i}`,
      contextId,
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: `m${i}` },
          mediaType: 'text/plain',
          filename: '',
          metadata: undefined,
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    })),
    artifacts: [],
    metadata: undefined,
  });
  const storeOf = () => new GoferTaskStore(fleet.ctx, { goferId, accountId: owner.accountId });
  const savedOf = async (taskId: string) =>
    (await fleet.events()).filter((e) => e.streamId === `a2atask-${taskId}`).length;

  it('loads what it saved (history bounded), and another caller finds nothing', async () => {
    const store = storeOf();
    const task = taskOf(TaskState.TASK_STATE_WORKING);
    await store.save(task, context('key:a'));
    const loaded = await store.load(task.id, context('key:a'));
    expect(loaded?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(loaded?.history.map((m) => m.messageId)).toEqual(task.history.slice(-40).map((m) => m.messageId));
    expect(await store.load(task.id, context('key:b'))).toBeUndefined();
    expect(
      (
        await store.list(
          { contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, tenant: '' },
          context('key:b'),
        )
      ).tasks,
    ).toEqual([]);
  });

  it('appends nothing for an unchanged save, and never changes a terminal task', async () => {
    const store = storeOf();
    const task = taskOf(TaskState.TASK_STATE_COMPLETED);
    await store.save(task, context('key:a'));
    await store.save(task, context('key:a'));
    expect(await savedOf(task.id)).toBe(1);
    await store.save(
      { ...task, status: { ...task.status!, state: TaskState.TASK_STATE_WORKING } },
      context('key:a'),
    );
    expect(await savedOf(task.id)).toBe(1);
    expect((await store.load(task.id, context('key:a')))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('lists the caller own tasks newest first, filtered by context and paged', async () => {
    const store = storeOf();
    const ctxId = `ctx-${randomUUID()}`;
    const a = taskOf(TaskState.TASK_STATE_COMPLETED, ctxId);
    const b = taskOf(TaskState.TASK_STATE_FAILED, ctxId);
    await store.save(a, context('key:lister'));
    await store.save(b, context('key:lister'));
    const page = await store.list(
      {
        contextId: ctxId,
        status: 0,
        pageSize: 1,
        pageToken: '',
        statusTimestampAfter: undefined,
        tenant: '',
      },
      context('key:lister'),
    );
    expect(page.tasks.map((t) => t.id)).toEqual([b.id]);
    expect(page.totalSize).toBe(2);
    const next = await store.list(
      {
        contextId: ctxId,
        status: 0,
        pageSize: 1,
        pageToken: page.nextPageToken,
        statusTimestampAfter: undefined,
        tenant: '',
      },
      context('key:lister'),
    );
    expect(next.tasks.map((t) => t.id)).toEqual([a.id]);
    expect(next.nextPageToken).toBe('');
  });
});

describe('a caller that declares a fresh identity for each message', () => {
  it('is still counted by its address, so fresh tokens buy nothing', async () => {
    const app = await fleet.buildAnother(
      { GOFER_A2A_ADDRESS_PER_MINUTE: '2' },
      { callerBrain: new ScriptedBrain() },
    );
    const { goferId: id } = await createGofer(fleet.ctx, { accountId: owner.accountId });
    expect((await put(id, owner.headers)).statusCode).toBe(200);
    const states: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({
        method: 'POST',
        url: `/a2a/gofers/${id}/`,
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer fresh-token-${randomUUID()}`,
        },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'SendMessage',
          params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        }),
      });
      const task = res.json().result.task as {
        status: { state: string; message?: { parts: { text: string }[] } };
      };
      states.push(`${task.status.state} ${task.status.message?.parts[0]?.text ?? ''}`.trim());
    }
    expect(states[0]).toMatch(/^TASK_STATE_COMPLETED/);
    expect(states[1]).toMatch(/^TASK_STATE_COMPLETED/);
    expect(states[2]).toMatch(/^TASK_STATE_REJECTED Rate limited: too many messages from this address/);
  });
});

describe('a Gofer on A2A, when 16 callers’ turns are recorded at once', () => {
  it('records every one once: they queue on the Gofer, and a retried turn is not doubled', async () => {
    const { goferId: id } = await createGofer(fleet.ctx, { accountId: owner.accountId });
    await publishOnA2A(fleet.ctx, { accountId: owner.accountId, goferId: id });
    const turn = (i: number) =>
      recordA2ATurn(fleet.ctx, {
        goferId: id,
        taskId: `task-${i}`,
        turn: 1,
        caller: `key:${i}`,
        asked: `question ${i}`,
        answered: `answer ${i}`,
      });
    const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => turn(i)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await turn(3)).toEqual({ appended: true });
    const rows = (await fleet.events()).filter(
      (e) => e.streamId === `gofer-${id}` && (e.data as { kind?: string | null }).kind === 'a2a',
    );
    expect(rows).toHaveLength(16);
  });
});

describe('a task canceled while the Gofer is still answering', () => {
  it('ends canceled, and the late answer is neither sent nor recorded', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let asked = 0;
    const app = await fleet.buildAnother(
      {},
      {
        callerBrain: {
          answerCaller: async () => {
            asked++;
            await gate;
            return { content: 'A late answer.', askOwner: null };
          },
        },
      },
    );
    const { goferId: id } = await createGofer(fleet.ctx, { accountId: owner.accountId });
    expect((await put(id, owner.headers)).statusCode).toBe(200);
    const call = (method: string, params: unknown) =>
      app.inject({
        method: 'POST',
        url: `/a2a/gofers/${id}`,
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: 'Bearer the-canceler-0001',
        },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const sent = await call('SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Take your time.' }] },
      configuration: { returnImmediately: true },
    });
    const taskId = (sent.json().result.task as { id: string }).id;
    for (let i = 0; asked === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    const canceled = await call('CancelTask', { id: taskId });
    expect(canceled.json().result).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_CANCELED' } });
    release();
    await new Promise((r) => setTimeout(r, 300));
    const got = await call('GetTask', { id: taskId });
    expect(got.json().result).toMatchObject({ status: { state: 'TASK_STATE_CANCELED' } });
    expect(got.body).not.toContain('A late answer.');
    const rows = (await fleet.events()).filter(
      (e) => e.streamId === `gofer-${id}` && (e.data as { kind?: string | null }).kind === 'a2a',
    );
    expect(rows).toEqual([]);
    // And a canceled task cannot be canceled into anything else.
    expect((await call('CancelTask', { id: taskId })).json().result.status.state).toBe('TASK_STATE_CANCELED');
  });
});

describe('a Gofer on A2A whose owner is banned', () => {
  it('is gone for callers at once: the card is 404 and sends are refused', async () => {
    const banned = await fleet.account('dsh');
    const { goferId: id } = await createGofer(fleet.ctx, { accountId: banned.accountId });
    expect((await put(id, banned.headers)).statusCode).toBe(200);
    expect((await card(id)).statusCode).toBe(200);
    await fleet.orm.em
      .fork()
      .getConnection()
      .execute(`update auth.accounts set banned_at = now() - interval '1 second' where id = ?`, [
        banned.accountId,
      ]);
    expect((await card(id)).statusCode).toBe(404);
    expect((await send(id, 'hello?')).statusCode).toBe(404);
  });
});

describe('a Gofer on A2A that its owner deletes', () => {
  it('is off A2A: the card is 404', async () => {
    const { goferId: id } = await createGofer(fleet.ctx, { accountId: owner.accountId });
    expect((await put(id, owner.headers)).statusCode).toBe(200);
    expect((await card(id)).statusCode).toBe(200);
    await deleteGofer(fleet.ctx, { accountId: owner.accountId, goferId: id });
    expect((await card(id)).statusCode).toBe(404);
    expect((await send(id, 'hello?')).statusCode).toBe(404);
  });
});

describe('a Gofer its owner takes off A2A', () => {
  it('answers 404 at once, cancels its open tasks, and a second DELETE is the same', async () => {
    const store = new GoferTaskStore(fleet.ctx, { goferId, accountId: owner.accountId });
    const ctx = new ServerCallContext({
      user: new CallerUser({ callerId: 'key:open', address: '10.0.0.2' }),
    });
    const open: Task = {
      id: randomUUID(),
      contextId: 'c',
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
      history: [],
      artifacts: [],
      metadata: undefined,
    };
    await store.save(open, ctx);
    const res = await del(goferId, owner.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ goferId, published: false });
    expect((await card(goferId)).statusCode).toBe(404);
    expect((await send(goferId, 'still there?')).statusCode).toBe(404);
    expect((await store.load(open.id, ctx))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await del(goferId, owner.headers)).json()).toEqual({ goferId, published: false });
  });
});
