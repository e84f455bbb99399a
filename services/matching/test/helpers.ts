import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sql, type MikroORM } from '@oan/db';
import { startInProcessFleet } from '@oan/testing';
import { buildApp, createMatchingContext, type MatchingAppDeps } from '../src/app.ts';
import type { MatchingContext } from '../src/commands/context.ts';
import { loadMatchingConfig, type MatchingConfig } from '../src/config.ts';
import { threadStreamId, type PairingMode, type ThreadEvent, type ThreadSide } from '@oan/domain';
import { proposePairing } from '../src/commands/threadIds.ts';
import { createMatchingStore, matchingMigrations } from '../src/infra/store.ts';

export const JWT_SECRET = 'matching-service-test-secret-matching';

type App = Awaited<ReturnType<typeof buildApp>>;

export interface Caller {
  accountId: string;
  headers: Record<string, string>;
}
export interface Side extends Caller {
  goferId: string;
  name: string;
}

export interface MatchingFleet {
  app: App;
  orm: MikroORM;
  authOrm: MikroORM;
  redis: Redis;
  ctx: MatchingContext;
  config: MatchingConfig;
  /** An account of the credential view with an API key (all permissions unless given). */
  account(opts?: { realm?: string; permissions?: readonly string[] }): Promise<Caller>;
  /**
   * A thread proposed between two fresh accounts' Gofers by running the domain's ProposePairing
   * (as the discovery reactor will), so the inline lookups are written as in production.
   */
  pair(mode?: PairingMode): Promise<{ threadId: string; a: Side; b: Side }>;
  /** The thread's stream, as stored. */
  events(threadId: string): Promise<ThreadEvent[]>;
  /** Every event of the matching store (for "nothing was appended"). */
  eventCount(): Promise<number>;
  buildAnother(env?: Record<string, string>, deps?: Partial<MatchingAppDeps>): Promise<App>;
  close(): Promise<void>;
}

/**
 * The matching app against real Postgres and Redis (libs/testing startInProcessFleet without a
 * projector: unique database and Redis prefix, removed by `close`). Its routes read the thread
 * streams and the inline lookups only, so no outbox publisher or projector runs here.
 */
export async function startMatchingFleet(env: Record<string, string> = {}): Promise<MatchingFleet> {
  const store = createMatchingStore();
  const fleet = await startInProcessFleet({
    name: 'matching',
    stores: [{ schema: 'matching', migrations: matchingMigrations(store) }],
    env: { JWT_SECRET, ...env },
  });
  const { authOrm, redis } = fleet;
  const orm = fleet.orms.matching!;
  const configOf = (extra: Record<string, string>) => loadMatchingConfig({ ...fleet.baseEnv, ...extra });
  try {
    const config = configOf({});
    const ctx = createMatchingContext({ config, orm, redis, store });
    // Every app is adopted by the fleet, which closes it first.
    const make = async (extra: Record<string, string>, deps: Partial<MatchingAppDeps>) =>
      fleet.adopt(await buildApp({ config: configOf(extra), orm, redis, ctx, metrics: false, ...deps }));
    const app = await make({}, {});
    const account: MatchingFleet['account'] = (opts = {}) => fleet.account(opts);

    return {
      app,
      orm,
      authOrm,
      redis,
      ctx,
      config,
      account,
      async pair(mode = 'confirm') {
        const [x, y] = await Promise.all([account(), account()]);
        const sideOf = (c: Caller, name: string): Side => ({ ...c, goferId: randomUUID(), name });
        const [s1, s2] = [sideOf(x, 'Acme Hiring'), sideOf(y, 'Lin')];
        const [a, b] = s1.goferId < s2.goferId ? [s1, s2] : [s2, s1];
        const snapshot = (s: Side): ThreadSide => ({
          goferId: s.goferId,
          accountId: s.accountId,
          name: s.name,
          sourcePlatform: 'dsh',
        });
        const { threadId } = await proposePairing(
          ctx,
          { mode, sides: [snapshot(b), snapshot(a)], score: 0.6 },
          [a.accountId, b.accountId],
        );
        return { threadId, a, b };
      },
      async events(threadId) {
        const stored = await store.readStream(orm.em.fork(), threadStreamId(threadId));
        return stored.map((e) => ({ type: e.type, data: e.data }) as ThreadEvent);
      },
      async eventCount() {
        const [row] = await sql<{ n: string }>(
          orm.em.fork(),
          'select count(*)::text as n from matching.events',
        );
        return Number(row!.n);
      },
      buildAnother: (extra = {}, deps = {}) => make(extra, deps),
      close: () => fleet.close(),
    };
  } catch (err) {
    await fleet.close();
    throw err;
  }
}
