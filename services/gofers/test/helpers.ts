import type { Redis } from 'ioredis';
import { credentialsMigration } from '@oan/auth';
import { openDatabase, type MikroORM } from '@oan/db';
import { startInProcessFleet, type RawStoredEvent } from '@oan/testing';
import { loadProjectorConfig, startPipeline, topicNames } from '@oan/projector';
import { readModelMigrations as projectorMigrations } from '@oan/readmodels';
import { buildApp, createGoferContext, type GoferAppDeps } from '../src/app.ts';
import type { GoferContext } from '../src/commands/context.ts';
import { loadGofersConfig, type GofersConfig } from '../src/config.ts';
import { createGoferStore, goferMigrations } from '../src/infra/store.ts';

export const JWT_SECRET = 'gofers-service-test-secret-gofers-service';

export type RawEvent = RawStoredEvent;

type App = Awaited<ReturnType<typeof buildApp>>;

export interface GoferFleet {
  app: App;
  orm: MikroORM;
  redis: Redis;
  ctx: GoferContext;
  config: GofersConfig;
  /** An account of the credential view, registered with `platform`, and an API key. */
  account(platform?: string): Promise<{ accountId: string; headers: Record<string, string> }>;
  /** Every stored event of the gofers store, in position order. */
  events(): Promise<RawEvent[]>;
  /** Builds another app on the same database, Redis and pipeline (e.g. with other switches). */
  buildAnother(env?: Record<string, string>, deps?: Partial<GoferAppDeps>): Promise<App>;
  close(): Promise<void>;
}

/**
 * The gofers app against real Postgres, Redis and Kafka, with the real outbox publisher and projector
 * pipeline in-process (libs/testing startInProcessFleet: unique database, Redis prefix and topic
 * prefix, all removed by `close`), so the read models the routes read are built exactly as in
 * production.
 */
export async function startGoferFleet(
  env: Record<string, string> = {},
  deps: Partial<GoferAppDeps> = {},
): Promise<GoferFleet> {
  const store = createGoferStore();
  const fleet = await startInProcessFleet({
    name: 'gofers',
    stores: [{ schema: 'gofers', migrations: goferMigrations(store) }],
    domainTopics: ['auth.events', 'gofers.events'],
    projector: {
      migrations: projectorMigrations,
      loadConfig: loadProjectorConfig,
      topicNames,
      startPipeline,
    },
    env: { JWT_SECRET, ...env },
  });
  const { redis } = fleet;
  const orm = fleet.orms.gofers!;
  const configOf = (extra: Record<string, string>) => loadGofersConfig({ ...fleet.baseEnv, ...extra });
  try {
    const config = configOf({});
    const ctx = createGoferContext({ config, orm, redis, store });
    // Every app is adopted by the fleet, which closes it first.
    const make = async (extra: Record<string, string>, more: Partial<GoferAppDeps>) => {
      const cfg = configOf(extra);
      // Another configuration (OAN_WEB_BASE_URL…) gets its own context over the same store.
      const appCtx =
        Object.keys(extra).length === 0 ? ctx : createGoferContext({ config: cfg, orm, redis, store });
      return fleet.adopt(
        await buildApp({ config: cfg, orm, redis, ctx: appCtx, metrics: false, ...deps, ...more }),
      );
    };
    const app = await make({}, {});
    return {
      app,
      orm,
      redis,
      ctx,
      config,
      account: (platform = 'other') => fleet.account({ platform }),
      events: () => fleet.events('gofers'),
      buildAnother: (extra = {}, more = {}) => make(extra, more),
      close: () => fleet.close(),
    };
  } catch (err) {
    await fleet.close();
    throw err;
  }
}

/**
 * The gofers schema plus the neighbour its commands read in production, for reactor tests that run
 * no projector: auth's credential view (`auth.accounts`, as migrated by auth).
 */
export async function openGofersDatabase(
  url: string,
  store: ReturnType<typeof createGoferStore>,
): Promise<MikroORM> {
  const authOrm = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
  await authOrm.close(true);
  const orm = await openDatabase({ url, schema: 'gofers', migrations: goferMigrations(store) });
  return orm;
}
