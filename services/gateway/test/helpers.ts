import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import {
  io as ioClient,
  type Socket as ClientSocket,
  type ManagerOptions,
  type SocketOptions,
} from 'socket.io-client';
import { credentialsMigration, signOanJwt } from '@oan/auth';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { oanEventMigration } from '@oan/projection';
import { serializeEnvelope, type OanEventEnvelope } from '@oan/protocol';
import { buildApp, type GatewayDeps } from '../src/app.ts';
import { loadGatewayConfig } from '../src/config.ts';

export const JWT_SECRET = 'gateway-test-secret-gateway-test-secret';

/** One database and one Redis prefix per test file (STYLE.md: unique names instead of cleanup). */
export interface Fleet {
  url: string;
  prefix: string;
  orm: MikroORM;
  redis: Redis;
  close(): Promise<void>;
}

export async function openFleet(): Promise<Fleet> {
  const url = `postgres://postgres@127.0.0.1:5432/oan_gw_${randomBytes(6).toString('hex')}`;
  // The projector and auth own these tables; the tests create them to set up state directly.
  const setup = await openDatabase({ url, schema: 'read', migrations: [oanEventMigration] });
  await setup.close(true);
  const orm = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
  const redis = new Redis('redis://127.0.0.1:6379/0');
  const prefix = `test:gw:${randomBytes(6).toString('hex')}:`;
  return {
    url,
    prefix,
    orm,
    redis,
    close: async () => {
      await redis.del(`${prefix}push`);
      redis.disconnect();
      await orm.close(true);
      await dropDatabase(url);
    },
  };
}

export interface RunningGateway {
  app: Awaited<ReturnType<typeof buildApp>>;
  url: string;
  /** The gateway's own pool, as its process would have. */
  orm: MikroORM;
  close(): Promise<void>;
}

export async function startGateway(
  fleet: Fleet,
  opts: { id?: string; openApi?: boolean; authUrl?: string; env?: Record<string, string> } & Partial<
    Omit<GatewayDeps, 'config'>
  > = {},
): Promise<RunningGateway> {
  const config = loadGatewayConfig({
    ...opts.env,
    JWT_SECRET,
    DATABASE_URL: fleet.url,
    REDIS_PREFIX: fleet.prefix,
    ENABLE_OPEN_API: opts.openApi === false ? 'false' : 'true',
    GATEWAY_ID: opts.id ?? 'g1',
    AUTH_URL: opts.authUrl ?? 'http://127.0.0.1:9',
    LOG_LEVEL: 'silent',
  });
  // Each gateway gets its own pool and Redis client, as separate processes would.
  const orm = await openDatabase({ url: fleet.url, schema: 'gateway' });
  const redis = new Redis('redis://127.0.0.1:6379/0');
  const app = await buildApp({ sweepMs: 300, ...opts, config, orm, redis });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    orm,
    close: async () => {
      await app.close();
      redis.disconnect();
      await orm.close(true);
    },
  };
}

export { insertAccount, insertApiKey } from '@oan/testing';

export const jwtFor = (accountId: string, realm: string | null = 'oan') =>
  signOanJwt(JWT_SECRET, { accountId, realm, ttlSeconds: 600 });

export function envelope(seq: number, over: Partial<OanEventEnvelope> = {}): OanEventEnvelope {
  return {
    v: 1,
    seq: String(seq),
    eventId: randomUUID(),
    type: 'gofer_message',
    goferId: randomUUID(),
    source: 'own_gofer',
    payload: { text: `message ${seq} ✓ "quoted"` },
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    ...over,
  };
}

/** Writes the row as the projector would; returns the stored text. */
export async function insertEvent(orm: MikroORM, accountId: string, env: OanEventEnvelope): Promise<string> {
  const text = serializeEnvelope(env);
  await sql(
    orm.em.fork(),
    'insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at) values (?, ?, ?, ?, ?, ?)',
    [accountId, env.seq, env.eventId, env.type, text, env.createdAt],
  );
  return text;
}

/** The projector's publish after commit (docs/architecture.md, Redis `push`). */
export async function publish(fleet: Fleet, accountId: string, text: string): Promise<void> {
  const seq = (JSON.parse(text) as OanEventEnvelope).seq;
  await fleet.redis.xadd(`${fleet.prefix}push`, '*', 't', 'env', 'a', accountId, 's', seq, 'e', text);
}

/** Commit then publish, like the projector. */
export async function commitAndPublish(
  fleet: Fleet,
  accountId: string,
  env: OanEventEnvelope,
): Promise<string> {
  const text = await insertEvent(fleet.orm, accountId, env);
  await publish(fleet, accountId, text);
  return text;
}

export interface TestClient {
  socket: ClientSocket;
  events: OanEventEnvelope[];
  /**
   * Every event in arrival order, with disconnects interleaved as `disconnect:<reason>`. The
   * server emits only `oan:event` with one argument; anything else shows up as
   * `unexpected:<name>/<argument count>`, which every exact `log` assertion then refuses.
   */
  log: string[];
}

export function openClient(
  baseUrl: string,
  auth: Record<string, unknown>,
  opts: Partial<ManagerOptions & SocketOptions> = {},
): TestClient {
  const socket = ioClient(`${baseUrl}/oan`, { auth, reconnection: false, forceNew: true, ...opts });
  const client: TestClient = { socket, events: [], log: [] };
  socket.onAny((name: string, ...args: unknown[]) => {
    if (name !== 'oan:event' || args.length !== 1) {
      client.log.push(`unexpected:${name}/${args.length}`);
      return;
    }
    const e = args[0] as OanEventEnvelope;
    client.events.push(e);
    client.log.push(`event:${e.seq}`);
  });
  socket.on('disconnect', (reason) => client.log.push(`disconnect:${reason}`));
  return client;
}

/** Resolves on `connect`, rejects with the server's connect_error. */
export async function connect(
  baseUrl: string,
  auth: Record<string, unknown>,
  opts: Partial<ManagerOptions & SocketOptions> = {},
): Promise<TestClient> {
  const client = openClient(baseUrl, auth, opts);
  await new Promise<void>((resolve, reject) => {
    client.socket.once('connect', resolve);
    client.socket.once('connect_error', reject);
  });
  return client;
}

export async function connectError(
  baseUrl: string,
  auth: Record<string, unknown>,
  opts: Partial<ManagerOptions & SocketOptions> = {},
): Promise<string> {
  const client = openClient(baseUrl, auth, opts);
  try {
    return await new Promise<string>((resolve, reject) => {
      client.socket.once('connect', () => reject(new Error('connected, expected connect_error')));
      client.socket.once('connect_error', (err) => resolve(err.message));
    });
  } finally {
    client.socket.close();
  }
}

/** Polls until `check` passes (STYLE.md: wait on conditions, never fixed sleeps). */
export async function waitFor(check: () => void | Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
