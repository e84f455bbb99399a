import { randomBytes, randomUUID } from 'node:crypto';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, type MikroORM } from '@oan/db';
import { ensureInfra } from '@oan/testing';
import { MAX_CONFIGS_PER_TASK, PgPushNotificationStore } from '../src/a2a/push/store.ts';
import { createGoferStore, goferMigrations } from '../src/infra/store.ts';

const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
let store: PgPushNotificationStore;

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url: dbUrl, schema: 'gofers', migrations: goferMigrations(createGoferStore()) });
  store = new PgPushNotificationStore({ orm, policy: { allowLoopback: false } });
});

afterAll(async () => {
  await orm?.close(true);
  await dropDatabase(dbUrl);
});

class Caller implements User {
  readonly userName: string;
  constructor(name: string) {
    this.userName = name;
  }
  get isAuthenticated() {
    return true;
  }
}

const as = (callerId: string) =>
  new ServerCallContext({ user: new Caller(callerId), requestedVersion: '1.0' });

const config = (
  taskId: string,
  over: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId,
  url: 'https://push.example.com/a2a',
  token: 'receiver-token',
  authentication: undefined,
  ...over,
});

describe('when a caller registers push configs on its task', () => {
  const taskId = randomUUID();
  const alice = as(`key:${randomUUID()}`);
  const bob = as(`key:${randomUUID()}`);

  it('gives an empty id one in place and lists the config back', async () => {
    const c = config(taskId, { authentication: { scheme: 'Bearer', credentials: 'abc' } });
    await store.save(taskId, alice, c);
    expect(c.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await store.load(taskId, alice)).toEqual([{ ...c, tenant: '' }]);
    expect(await store.loadWithMetadata(taskId, alice)).toEqual([{ config: c, wireVersion: '1.0' }]);
  });

  it('shows another caller nothing, and its delete changes nothing', async () => {
    const [mine] = await store.load(taskId, alice);
    expect(await store.load(taskId, bob)).toEqual([]);
    await store.delete(taskId, bob, mine!.id);
    // Saving under the same id as another caller creates its own config, never replaces the first.
    await store.save(taskId, bob, config(taskId, { id: mine!.id, url: 'https://other.example.com/' }));
    expect(await store.load(taskId, alice)).toEqual([mine]);
    expect((await store.load(taskId, bob)).map((c) => c.url)).toEqual(['https://other.example.com/']);
  });

  it('has none for a task it never registered on', async () => {
    expect(await store.load(randomUUID(), alice)).toEqual([]);
  });

  it('replaces a config saved again under its id', async () => {
    const c = config(taskId, { id: 'fixed', url: 'https://a.example.com/' });
    await store.save(taskId, alice, c);
    await store.save(taskId, alice, { ...c, url: 'https://b.example.com/', token: 't2' });
    const fixed = (await store.load(taskId, alice)).filter((x) => x.id === 'fixed');
    expect(fixed).toEqual([expect.objectContaining({ url: 'https://b.example.com/', token: 't2' })]);
  });

  it('deletes by id only that config', async () => {
    const before = await store.load(taskId, alice);
    await store.delete(taskId, alice, 'fixed');
    expect(await store.load(taskId, alice)).toEqual(before.filter((c) => c.id !== 'fixed'));
  });

  it('deletes the config named after the task when no id is given', async () => {
    const t = randomUUID();
    await store.save(t, alice, config(t, { id: t }));
    await store.save(t, alice, config(t, { id: 'kept' }));
    await store.delete(t, alice);
    expect((await store.load(t, alice)).map((c) => c.id)).toEqual(['kept']);
  });
});

describe('when a task already has the most push configs', () => {
  const taskId = randomUUID();
  const carol = as(`addr:${randomUUID()}`);

  it('refuses one more with invalid params, but still replaces an existing one', async () => {
    for (let i = 0; i < MAX_CONFIGS_PER_TASK; i++)
      await store.save(taskId, carol, config(taskId, { id: `c${i}` }));
    const extra = store.save(taskId, carol, config(taskId, { id: 'one-too-many' }));
    await expect(extra).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(extra).rejects.toThrow(`at most ${MAX_CONFIGS_PER_TASK}`);
    await store.save(taskId, carol, config(taskId, { id: 'c0', url: 'https://again.example.com/' }));
    expect(await store.load(taskId, carol)).toHaveLength(MAX_CONFIGS_PER_TASK);
  });

  it('lets only the limit through when creates race', async () => {
    const t = randomUUID();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.save(t, carol, config(t, { id: `r${i}` }))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_CONFIGS_PER_TASK);
    expect(await store.load(t, carol)).toHaveLength(MAX_CONFIGS_PER_TASK);
  });
});

describe('when a push URL breaks the webhook address rules', () => {
  const taskId = randomUUID();
  const dave = as(`key:${randomUUID()}`);

  it.each([
    ['http to a public address', 'http://push.example.com/a2a'],
    ['a private address', 'https://10.1.2.3/a2a'],
    ['a loopback address', 'https://127.0.0.1:8443/a2a'],
    ['localhost', 'https://localhost/a2a'],
    ['the cloud metadata address', 'https://169.254.169.254/latest'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/a2a'],
    ['credentials in the URL', 'https://user:pw@push.example.com/a2a'],
    ['no URL at all', 'not a url'],
  ])('refuses %s with invalid params and keeps nothing', async (_what, url) => {
    await expect(store.save(taskId, dave, config(taskId, { url }))).rejects.toBeInstanceOf(
      RequestMalformedError,
    );
    expect(await store.load(taskId, dave)).toEqual([]);
  });

  it('refuses a token or credentials that could break a header', async () => {
    await expect(
      store.save(taskId, dave, config(taskId, { token: 'a\r\nX-Evil: 1' })),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    const auth = { scheme: 'Bearer x', credentials: 'abc' };
    await expect(store.save(taskId, dave, config(taskId, { authentication: auth }))).rejects.toBeInstanceOf(
      RequestMalformedError,
    );
    expect(await store.load(taskId, dave)).toEqual([]);
  });

  it('accepts http and loopback only with the QA switch, and private addresses never', async () => {
    const qa = new PgPushNotificationStore({ orm, policy: { allowLoopback: true } });
    await qa.save(taskId, dave, config(taskId, { id: 'local', url: 'http://127.0.0.1:9/a2a' }));
    await expect(
      qa.save(taskId, dave, config(taskId, { url: 'http://10.1.2.3/a2a' })),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    expect((await store.load(taskId, dave)).map((c) => c.id)).toEqual(['local']);
  });
});

describe('when a call carries no caller', () => {
  it('is refused rather than shared by every anonymous call', async () => {
    const anonymous = new ServerCallContext({ requestedVersion: '1.0' });
    await expect(store.load(randomUUID(), anonymous)).rejects.toThrow('without its caller');
  });
});
