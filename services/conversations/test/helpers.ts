import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql, type MikroORM } from '@oan/db';
import { FilesystemStorage, startFileListener, type FileListener } from '@oan/storage';
import { startInProcessFleet, type InProcessFleet } from '@oan/testing';
import { loadProjectorConfig, startPipeline, topicNames } from '@oan/projector';
import { readModelMigrations as projectorMigrations } from '@oan/readmodels';
import { buildApp, createConversationContext } from '../src/app.ts';
import { openConversation, type ConversationContext } from '../src/commands/context.ts';
import { loadConversationsConfig, type ConversationsConfig } from '../src/config.ts';
import { conversationMigrations, createConversationStore } from '../src/infra/store.ts';

type App = Awaited<ReturnType<typeof buildApp>>;
export type Res = Awaited<ReturnType<App['inject']>>;

export interface Caller {
  accountId: string;
  headers: Record<string, string>;
}

export interface Match {
  conversationId: string;
  matchId: string;
  threadId: string;
  a: Caller & { goferId: string };
  b: Caller & { goferId: string };
}

/** The data of `MatchRequestDecided` accepting `m`'s match (B accepts A's request), as matching appends it. */
export const acceptedDecision = (m: Match, decidedAt = new Date().toISOString()) => ({
  threadId: m.threadId,
  requestId: randomUUID(),
  requesterGoferId: m.a.goferId,
  requesterAccountId: m.a.accountId,
  recipientGoferId: m.b.goferId,
  recipientAccountId: m.b.accountId,
  status: 'accepted',
  decidedBy: 'recipient',
  matchId: m.matchId,
  conversationId: m.conversationId,
  decidedAt,
});

export interface ConversationFleet {
  app: App;
  fleet: InProcessFleet;
  orm: MikroORM;
  ctx: ConversationContext;
  config: ConversationsConfig;
  storage: FilesystemStorage;
  listener: FileListener;
  account(): Promise<Caller>;
  /** Two fresh accounts whose Gofers matched, and their conversation opened as the opener reactor does. */
  match(opts?: { open?: boolean }): Promise<Match>;
  /** Every stored event of the conversations store, in position order. */
  events(): Promise<{ type: string; partitionKey: string; data: Record<string, unknown> }[]>;
  /** The OAN envelopes the projector wrote for an account (read.oan_event), in seq order. */
  envelopes(accountId: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/**
 * The conversations app against real Postgres, Redis and Kafka, with the outbox publisher and the projector
 * in-process (libs/testing startInProcessFleet), and filesystem storage with its listener.
 */
export async function startConversationFleet(
  env: Record<string, string> = {},
  /** The commands' clock (the service's `now`), for tests that move it. */
  opts: { now?: () => Date } = {},
): Promise<ConversationFleet> {
  const store = createConversationStore();
  const fleet = await startInProcessFleet({
    name: 'conversations',
    stores: [{ schema: 'conversations', migrations: conversationMigrations(store) }],
    domainTopics: ['auth.events', 'conversations.events'],
    projector: {
      migrations: projectorMigrations,
      loadConfig: loadProjectorConfig,
      topicNames,
      startPipeline,
    },
    env,
  });
  const config = loadConversationsConfig(fleet.baseEnv);
  const orm = fleet.orms.conversations!;
  const dir = mkdtempSync(join(tmpdir(), 'oan-conv-'));
  const storage = new FilesystemStorage({ dir, secret: 'conversations-test-signing-secret-0123456789' });
  const listener = await startFileListener({ storage, host: '127.0.0.1', port: 0 });
  const ctx = createConversationContext({
    config,
    orm,
    redis: fleet.redis,
    store,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const app = await buildApp({ config, orm, redis: fleet.redis, ctx, storage, metrics: false });

  const account = () => fleet.account();
  return {
    app,
    fleet,
    orm,
    ctx,
    config,
    storage,
    listener,
    account,
    async match(opts = {}) {
      const [a, b] = await Promise.all([account(), account()]);
      const m: Match = {
        conversationId: randomUUID(),
        matchId: randomUUID(),
        threadId: randomUUID(),
        a: { ...a, goferId: randomUUID() },
        b: { ...b, goferId: randomUUID() },
      };
      if (opts.open ?? true) {
        await openConversation(
          ctx,
          {
            conversationId: m.conversationId,
            matchId: m.matchId,
            threadId: m.threadId,
            accountA: m.a.accountId,
            goferA: m.a.goferId,
            accountB: m.b.accountId,
            goferB: m.b.goferId,
            openedAt: new Date().toISOString(),
          },
          null,
        );
      }
      return m;
    },
    events: () =>
      sql(
        orm.em.fork(),
        `select type, account_id as "partitionKey", data from conversations.events order by position`,
      ),
    async envelopes(accountId) {
      const rows = await sql<{ envelope: Record<string, unknown> | string }>(
        fleet.projectorOrm.em.fork(),
        'select envelope from read.oan_event where account_id = ? order by seq',
        [accountId],
      );
      return rows.map((r) =>
        typeof r.envelope === 'string' ? (JSON.parse(r.envelope) as Record<string, unknown>) : r.envelope,
      );
    },
    async close() {
      await app.close();
      await listener.close();
      await fleet.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
