import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
  type User,
} from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, type MikroORM } from '@oan/db';
import { silentLogger } from '@oan/kafka';
import { ensureInfra, waitFor } from '@oan/testing';
import { createA2aPush, MAX_CONFIGS_PER_TASK, type A2APush } from '../src/a2a/push/index.ts';
import { loadGofersConfig } from '../src/config.ts';
import { createGoferStore, goferMigrations } from '../src/infra/store.ts';

/**
 * The push pieces inside the SDK's own request handler and JSON-RPC transport, as the A2A routes
 * compose them: what a client sees of a refused config, and a task's events reaching its receiver.
 */
const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
let push: A2APush;
let rpc: JsonRpcTransportHandler;
let server: Server;
let url: string;
const bodies: { token: string; body: Record<string, unknown> }[] = [];

const executor: AgentExecutor = {
  async execute(rc, bus) {
    const status = (state: TaskState) => ({ state, message: undefined, timestamp: undefined });
    const ids = { taskId: rc.taskId, contextId: rc.contextId };
    bus.publish(
      AgentEvent.task(
        Task.fromJSON({ id: rc.taskId, contextId: rc.contextId, status: { state: 'TASK_STATE_SUBMITTED' } }),
      ),
    );
    bus.publish(
      AgentEvent.statusUpdate({ ...ids, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        ...ids,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  },
  cancelTask: () => Promise.resolve(),
};

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url: dbUrl, schema: 'gofers', migrations: goferMigrations(createGoferStore()) });
  const config = loadGofersConfig({
    JWT_SECRET: 's'.repeat(32),
    GOFER_A2A_PUSH_ALLOW_LOOPBACK: 'true',
    GOFER_A2A_PUSH_POLL_MS: '50',
  });
  push = createA2aPush({ orm, config, log: silentLogger });
  push.delivery.start();
  const card = AgentCard.fromJSON({
    name: 'test',
    description: 'test',
    version: '1',
    capabilities: { streaming: true, pushNotifications: true },
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
  });
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    undefined,
    push.store,
    push.sender,
  );
  rpc = new JsonRpcTransportHandler(handler);
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const token = String(req.headers['x-a2a-notification-token']);
      bodies.push({ token, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await push?.delivery.stop();
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  await orm?.close(true);
  await dropDatabase(dbUrl);
});

const as = (name: string) => {
  const user: User = { isAuthenticated: true, userName: name };
  return new ServerCallContext({ user, requestedVersion: '1.0' });
};

const call = async (context: ServerCallContext, method: string, params: Record<string, unknown>) =>
  (await rpc.handle({ jsonrpc: '2.0', id: 1, method, params }, context)) as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };

const send = (context: ServerCallContext, token: string) =>
  call(context, 'SendMessage', {
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] },
    configuration: { taskPushNotificationConfig: { url, token } },
  });

describe('when a client registers a push config with its message', () => {
  it('gets each of the task’s events at its URL, in order', async () => {
    const token = randomUUID();
    const answer = await send(as(`key:${randomUUID()}`), token);
    const taskId = (answer.result?.task as { id: string }).id;
    const mine = () => bodies.filter((b) => b.token === token);
    await waitFor(() => mine().length === 3, { what: 'three notifications' });
    expect(mine().map((b) => Object.keys(b.body)[0])).toEqual(['task', 'statusUpdate', 'statusUpdate']);
    expect(mine()[2]!.body).toMatchObject({
      statusUpdate: { taskId, status: { state: 'TASK_STATE_COMPLETED' } },
    });
  });
});

describe('when a client breaks the push rules over JSON-RPC', () => {
  it('is answered invalid params for a private address, and for one config too many', async () => {
    const caller = as(`key:${randomUUID()}`);
    const bad = await call(caller, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] },
      configuration: { taskPushNotificationConfig: { url: 'http://10.0.0.1/hook' } },
    });
    expect(bad.error?.code).toBe(-32602);
    const first = await send(caller, 'first');
    const taskId = (first.result?.task as { id: string }).id;
    for (let i = 1; i < MAX_CONFIGS_PER_TASK; i++) {
      expect((await call(caller, 'CreateTaskPushNotificationConfig', { taskId, url })).error).toBeUndefined();
    }
    const extra = await call(caller, 'CreateTaskPushNotificationConfig', { taskId, url });
    expect(extra.error?.code).toBe(-32602);
    const listed = await call(caller, 'ListTaskPushNotificationConfigs', { taskId });
    expect((listed.result?.configs as unknown[]).length).toBe(MAX_CONFIGS_PER_TASK);
  });
});
