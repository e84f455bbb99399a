import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { StreamResponse, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext, V1PushNotificationSerializer, type User } from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { silentLogger } from '@oan/kafka';
import { ensureInfra, waitFor } from '@oan/testing';
import { PgPushNotificationStore, PushDelivery, QueuedPushSender } from '../src/a2a/push/index.ts';
import { createGoferStore, goferMigrations } from '../src/infra/store.ts';

/** The delivery loop against a real receiver on loopback (the QA switch) and real Postgres. */
const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
let store: PgPushNotificationStore;
let sender: QueuedPushSender;
let server: Server;
let base: string;
const loops: PushDelivery[] = [];

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}
const hits: Hit[] = [];
/** How a path answers the nth request for one notification (by its webhook-id), n from 1. */
const answers = new Map<string, (n: number, body: string) => number>();
const seen = new Map<string, number>();

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url: dbUrl, schema: 'gofers', migrations: goferMigrations(createGoferStore()) });
  store = new PgPushNotificationStore({ orm, policy: { allowLoopback: true } });
  sender = new QueuedPushSender({ orm, store, onQueued: () => loops.forEach((l) => l.wake()) });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '';
      const key = `${path} ${String(req.headers['webhook-id'])}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const status = answers.get(path)?.(n, body) ?? 204;
      hits.push({ path, headers: req.headers, body, status });
      // A short wait, so racing loops overlap while a request is in flight.
      setTimeout(() => res.writeHead(status).end(), 5);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  await orm?.close(true);
  await dropDatabase(dbUrl);
});

/** Delivery loops for the tests of one `describe`, stopped after them. */
function withLoops(count: number, maxAttempts: number) {
  const mine: PushDelivery[] = [];
  beforeAll(() => {
    for (let i = 0; i < count; i++) mine.push(startLoop(maxAttempts));
  });
  afterAll(async () => {
    await Promise.all(mine.map((l) => l.stop()));
    for (const l of mine) loops.splice(loops.indexOf(l), 1);
  });
}

function startLoop(maxAttempts: number): PushDelivery {
  const loop = new PushDelivery({
    orm,
    store,
    policy: { allowLoopback: true },
    timeoutMs: 2000,
    retry: { baseMs: 20, maxMs: 60, maxAttempts },
    pollMs: 50,
    concurrency: 8,
    log: silentLogger,
  });
  loop.start();
  loops.push(loop);
  return loop;
}

const caller = (): ServerCallContext => {
  const user: User = { isAuthenticated: true, userName: `key:${randomUUID()}` };
  return new ServerCallContext({ user, requestedVersion: '1.0' });
};

const working = (taskId: string, n: number) =>
  StreamResponse.fromJSON({
    statusUpdate: {
      taskId,
      contextId: 'ctx',
      status: {
        state: 'TASK_STATE_WORKING',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      },
      metadata: { n },
    },
  });

const nOf = (h: Hit) =>
  (JSON.parse(h.body) as { statusUpdate: { metadata: { n: number } } }).statusUpdate.metadata.n;

async function register(
  context: ServerCallContext,
  path: string,
  over: Partial<TaskPushNotificationConfig> = {},
) {
  const taskId = randomUUID();
  await store.save(taskId, context, {
    tenant: '',
    id: '',
    taskId,
    url: `${base}${path}`,
    token: 'receiver-token',
    authentication: undefined,
    ...over,
  });
  return taskId;
}

const at = (path: string) => hits.filter((h) => h.path === path);

describe('when an event of a task with a push config is sent', () => {
  withLoops(1, 5);

  it('reaches the receiver with the token and the serializer’s body, signed with the token', async () => {
    const context = caller();
    const taskId = await register(context, '/plain');
    const event = working(taskId, 1);
    await sender.send(event, context);
    const [hit] = await waitFor(() => at('/plain').length === 1 && at('/plain'), {
      what: 'the notification',
    });
    const expected = new V1PushNotificationSerializer().serialize(event);
    expect(hit!.body).toBe(expected.body);
    expect(hit!.headers['content-type']).toBe('application/a2a+json');
    expect(hit!.headers['x-a2a-notification-token']).toBe('receiver-token');
    expect(hit!.headers.authorization).toBeUndefined();
    const key = new TextEncoder().encode('receiver-token');
    expect(() =>
      new Webhook(key, { format: 'raw' }).verify(hit!.body, hit!.headers as Record<string, string>),
    ).not.toThrow();
  });

  it('carries the config’s authentication as the Authorization header', async () => {
    const context = caller();
    const authentication = { scheme: 'Bearer', credentials: 'for-the-receiver' };
    const taskId = await register(context, '/auth', { token: '', authentication });
    await sender.send(working(taskId, 1), context);
    const [hit] = await waitFor(() => at('/auth').length === 1 && at('/auth'), { what: 'the notification' });
    expect(hit!.headers.authorization).toBe('Bearer for-the-receiver');
    expect(hit!.headers['webhook-signature']).toBeUndefined();
  });

  it('queues nothing for a task without configs or another caller’s task', async () => {
    const context = caller();
    const taskId = await register(context, '/nobody');
    await sender.send(working(taskId, 1), caller());
    await sender.send(working(randomUUID(), 1), context);
    const [row] = await sql<{ n: number }>(
      orm.em.fork(),
      `select count(*)::int as n from gofers.a2a_push_deliveries
      where task_id = ?`,
      [taskId],
    );
    expect(row!.n).toBe(0);
  });
});

describe('when an event comes from a call without a caller', () => {
  it('is a rejected send, which the SDK’s handler catches, not a throw into its stream', async () => {
    const anonymous = new ServerCallContext({ requestedVersion: '1.0' });
    const sent = sender.send(working(randomUUID(), 1), anonymous);
    await expect(sent).rejects.toThrow('without its caller');
  });
});

describe('when the receiver fails', () => {
  withLoops(1, 3);

  it('gets the same body again until it answers 2xx (500, 500, then 200)', async () => {
    answers.set('/flaky', (n) => (n <= 2 ? 500 : 200));
    const context = caller();
    const taskId = await register(context, '/flaky');
    await sender.send(working(taskId, 7), context);
    await waitFor(
      async () => {
        const [row] = await sql<{ state: string }>(
          orm.em.fork(),
          `select state from gofers.a2a_push_deliveries
        where task_id = ?`,
          [taskId],
        );
        return row?.state === 'delivered';
      },
      { what: 'the delivery' },
    );
    const got = at('/flaky');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((h) => h.body)).size).toBe(1);
    expect(new Set(got.map((h) => h.headers['webhook-id'])).size).toBe(1);
  });

  it('gives up after the most attempts, and only then sends the task’s next event', async () => {
    answers.set('/down-first', (_n, body) => (body.includes('"n":1') ? 500 : 204));
    const context = caller();
    const taskId = await register(context, '/down-first');
    await sender.send(working(taskId, 1), context);
    await sender.send(working(taskId, 2), context);
    const rows = () =>
      sql<{ state: string; attempts: number; last_error: string }>(
        orm.em.fork(),
        `select state, attempts, last_error from gofers.a2a_push_deliveries where task_id = ? order by id`,
        [taskId],
      );
    await waitFor(async () => (await rows())[1]?.state === 'delivered', { what: 'the next event' });
    expect(await rows()).toEqual([
      { state: 'failed', attempts: 3, last_error: 'HTTP 500' },
      { state: 'delivered', attempts: 1, last_error: null },
    ]);
    expect(at('/down-first').map((h) => [nOf(h), h.status])).toEqual([
      [1, 500],
      [1, 500],
      [1, 500],
      [2, 204],
    ]);
  });
});

describe('when the caller deletes a config', () => {
  withLoops(1, 50);

  it('drops the notifications still waiting for it', async () => {
    answers.set('/deleted', () => 500);
    const context = caller();
    const taskId = await register(context, '/deleted');
    await sender.send(working(taskId, 1), context);
    await sender.send(working(taskId, 2), context);
    await waitFor(() => at('/deleted').length >= 1, { what: 'a first attempt' });
    const [config] = await store.load(taskId, context);
    await store.delete(taskId, context, config!.id);
    const left = await sql(orm.em.fork(), `select id from gofers.a2a_push_deliveries where task_id = ?`, [
      taskId,
    ]);
    expect(left).toEqual([]);
  });
});

describe('when several delivery loops run over one queue', () => {
  withLoops(2, 5);

  it('delivers each notification once, and each task’s in order despite a failure', async () => {
    // The first attempt at each task's first event fails: its later events must wait for it.
    answers.set('/race', (n, body) => (n === 1 && body.includes('"n":1') ? 503 : 204));
    const tasks = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const context = caller();
        return { context, taskId: await register(context, '/race') };
      }),
    );
    // Sent as the SDK's handler sends them: not waiting for one before the next.
    await Promise.all(
      tasks.flatMap(({ context, taskId }) =>
        Array.from({ length: 5 }, (_, i) => sender.send(working(taskId, i + 1), context)),
      ),
    );
    const succeeded = () => at('/race').filter((h) => h.status === 204);
    await waitFor(() => succeeded().length >= 30, { what: 'every notification delivered' });
    const ids = succeeded().map((h) => String(h.headers['webhook-id']));
    expect(new Set(ids).size).toBe(30);
    for (const { taskId } of tasks) {
      const mine = at('/race').filter((h) => h.body.includes(taskId));
      // Every request of the task, failed or not, in arrival order: 1 (failed), 1, 2, 3, 4, 5.
      expect(mine.map((h) => [nOf(h), h.status])).toEqual([
        [1, 503],
        [1, 204],
        [2, 204],
        [3, 204],
        [4, 204],
        [5, 204],
      ]);
    }
  });
});
