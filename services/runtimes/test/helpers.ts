import { randomUUID } from 'node:crypto';
import { sql, type MikroORM } from '@oan/db';
import { readModelMigrations } from '@oan/readmodels';
import { startInProcessFleet, type InProcessStores } from '@oan/testing';
import { buildApp, createRuntimesContext } from '../src/app.ts';
import type { RuntimesContext } from '../src/commands/context.ts';
import { loadRuntimesConfig, type RuntimesConfig } from '../src/config.ts';
import { Endpoints, endpointSettings } from '../src/dispatch/endpoints.ts';
import { runtimesMigrations } from '../src/infra/tables.ts';

type App = Awaited<ReturnType<typeof buildApp>>;
export type Res = Awaited<ReturnType<App['inject']>>;

export interface Caller {
  accountId: string;
  headers: Record<string, string>;
}

/** A clock the test moves: leases run out when the test says so. */
export class TestClock {
  private offsetMs = 0;
  now = () => new Date(Date.now() + this.offsetMs);
  advance(seconds: number) {
    this.offsetMs += seconds * 1000;
  }
}

export interface RuntimesWorld {
  app: App;
  world: InProcessStores;
  orm: MikroORM;
  ctx: RuntimesContext;
  config: RuntimesConfig;
  /** The app's endpoint sender (verification), for a dispatcher to share. */
  endpoints: Endpoints;
  clock: TestClock;
  account(): Promise<Caller>;
  call(caller: Caller, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Res>;
  /**
   * Stores an envelope for the account as the projector does (next seq, read.oan_event); `reply`
   * is set unless `reply: false`. Returns it as stored.
   */
  envelope(
    accountId: string,
    e: {
      type: string;
      goferId?: string;
      reply?: boolean;
      /** More top-level fields (threadId, conversationId) and payload fields (requestId, messageId). */
      top?: Record<string, unknown>;
      payload?: Record<string, unknown>;
    },
  ): Promise<{ seq: string; eventId: string; text: string }>;
  close(): Promise<void>;
}

/** The runtimes app against real Postgres and Redis, with the projector's event table beside it. */
export async function startRuntimesWorld(env: Record<string, string> = {}): Promise<RuntimesWorld> {
  const world = await startInProcessFleet({
    name: 'runtimes',
    stores: [
      { schema: 'runtimes', migrations: runtimesMigrations },
      // every read model: supersession reads the ones a decision concerns
      { schema: 'projector', migrations: readModelMigrations },
    ],
    env,
  });
  const config = loadRuntimesConfig(world.baseEnv);
  const orm = world.orms.runtimes!;
  const clock = new TestClock();
  const ctx = createRuntimesContext({ orm, now: clock.now });
  const endpoints = new Endpoints(endpointSettings(config));
  const app = world.adopt(
    await buildApp({ config, orm, redis: world.redis, ctx, endpoints, metrics: false }),
  );
  const projector = world.orms.projector!;
  return {
    app,
    world,
    orm,
    ctx,
    config,
    endpoints,
    clock,
    account: () => world.account(),
    call: (caller, method, path, body) =>
      app.inject({
        method,
        url: `/api/v1${path}`,
        headers: caller.headers,
        ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      }),
    async envelope(accountId, e) {
      const em = projector.em.fork();
      return em.transactional(async (tx) => {
        const [row] = await sql<{ last_seq: string }>(
          tx,
          `insert into read.oan_account_seq (account_id, last_seq) values (?, 1)
           on conflict (account_id) do update set last_seq = oan_account_seq.last_seq + 1 returning last_seq::text`,
          [accountId],
        );
        const seq = row!.last_seq;
        const eventId = randomUUID();
        const text = JSON.stringify({
          v: 1,
          seq,
          eventId,
          type: e.type,
          ...(e.goferId ? { goferId: e.goferId, chatId: e.goferId } : {}),
          ...e.top,
          source: 'own_gofer',
          ...(e.reply === false
            ? {}
            : { reply: { method: 'POST', path: `/api/v1/gofers/${e.goferId ?? 'x'}/chat/messages` } }),
          payload: {
            messageId: randomUUID(),
            content: 'Which city?',
            createdAt: new Date().toISOString(),
            ...e.payload,
          },
          createdAt: new Date().toISOString(),
        });
        await sql(
          tx,
          'insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at) values (?, ?, ?, ?, ?, now())',
          [accountId, seq, eventId, e.type, text],
        );
        return { seq, eventId, text };
      });
    },
    close: async () => {
      await world.close();
      await endpoints.close();
    },
  };
}
