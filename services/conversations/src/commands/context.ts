import type { EntityManager, MikroORM } from '@oan/db';
import { ConcurrencyError, type EventStore, type StoredEvent } from '@oan/eventstore';
import { awaitOwnWrites, type WriteSource, type WriteTracker } from '@oan/projection';
import { acceptedMatchOfConversation, deletedGoferAmong } from '@oan/readmodels';
import { v5 as uuidv5 } from 'uuid';
import { assertParticipant, type Conversation } from '../domain/conversation.ts';
import { conversationForbidden } from '../domain/errors.ts';
import { conversationStreamId, type ConversationEvent, type ConversationOpened } from '@oan/domain';
import { applyToWriteState, loadConversation } from '../infra/store.ts';

/** What every command handler, route and reactor of the conversations service needs. */
export interface ConversationContext {
  orm: MikroORM;
  /** `EventStore('conversations', avroEventValidator(registry))` (src/infra/store.ts). */
  store: EventStore;
  /** Records each command's last position so the writer's next reads wait for the projector. */
  writes: WriteTracker;
  now: () => Date;
  /** Fresh ids (randomUUID) for messages and attachments. */
  ids: () => string;
}

/** The read-your-writes source name of this event store (topic `conversations.events`). */
export const WRITE_SOURCE: WriteSource = 'conversations';

/** Namespace of the ids of the events an opener writes (never change it). */
const EVENT_NAMESPACE = '3b7d2f4e-8a61-4c0f-9e25-6d1a7c9b0e43';

/** An id that can exist (UUIDs); anything else is answered as unknown without a query. */
export const plausibleId = (id: string) => /^[A-Za-z0-9_-]{1,128}$/.test(id);

export interface Decided {
  /** The Kafka key of the events: the acting account (its partition orders them). */
  accountId: string;
  events: ConversationEvent[];
}

/**
 * One command on an existing conversation: lock its write-state row, decide on it (reading what else
 * the decision needs in the same transaction), append with the row's version as the expected stream
 * version, and update the write state — all in one transaction. The row lock serializes commands on
 * one conversation (two sends queue instead of failing their optimistic check); the version check
 * stays as the store's guarantee. Then the actor's position is remembered for its next reads.
 */
export async function runConversationCommand(
  ctx: ConversationContext,
  conversationId: string,
  decide: (em: EntityManager, conv: Conversation | null, now: string) => Promise<Decided | null>,
  opts: { openFor?: string } = {},
): Promise<StoredEvent[]> {
  if (!plausibleId(conversationId)) throw conversationForbidden();
  // With `openFor` (the caller's account): a conversation this service has not opened yet (its
  // accepted match request is there, the opener reactor has not run) is opened first, then the command
  // runs — found missing inside the command's own transaction, so a command on an open conversation
  // reads it once (issue 11).
  const missing = Symbol('missing');
  const run = (openFirst: boolean) =>
    ctx.orm.em.fork().transactional(async (em) => {
      const loaded = await loadConversation(em, conversationId, true);
      if (!loaded && openFirst) return missing;
      const now = ctx.now().toISOString();
      const decided = await decide(em, loaded?.conversation ?? null, now);
      if (!loaded || !decided || decided.events.length === 0) return [];
      const stored = await ctx.store.append(em, [
        {
          streamId: conversationStreamId(conversationId),
          expectedVersion: loaded.version,
          events: decided.events.map((e) => ({
            type: e.type,
            data: e.data,
            accountId: decided.accountId,
            occurredAt: now,
          })),
        },
      ]);
      for (const s of stored) await applyToWriteState(em, s);
      return stored;
    });
  let outcome = await run(opts.openFor !== undefined);
  if (outcome === missing) {
    await ensureConversation(ctx, conversationId, opts.openFor);
    outcome = await run(false);
  }
  // run(false) decides even without a conversation (the decider refuses it), so never `missing`.
  const appended = outcome === missing ? [] : outcome;
  if (appended.length > 0) ctx.store.committed(ctx.orm);
  const last = appended.at(-1);
  if (last) await ctx.writes.remember(last.accountId, WRITE_SOURCE, last.position);
  return appended;
}

/**
 * Starts a conversation's stream (the opener reactor, or a route that meets a conversation the
 * reactor has not opened yet). Idempotent: the stream can be started once; a second opener's append
 * fails its `no_stream` check and it returns false. A Gofer already deleted closes it at once.
 */
export async function openConversation(
  ctx: ConversationContext,
  opened: ConversationOpened,
  deletedGoferId: string | null,
): Promise<boolean> {
  try {
    await ctx.orm.em.fork().transactional(async (em) => {
      const events: ConversationEvent[] = [{ type: 'ConversationOpened', data: opened }];
      if (deletedGoferId) {
        const closedAt = ctx.now().toISOString();
        const data = { conversationId: opened.conversationId, goferId: deletedGoferId, attachmentIds: [] };
        events.push({ type: 'ConversationClosed', data: { ...data, reason: 'gofer_deleted', closedAt } });
      }
      const stored = await ctx.store.append(em, [
        {
          streamId: conversationStreamId(opened.conversationId),
          expectedVersion: 'no_stream',
          events: events.map((e) => ({
            type: e.type,
            data: e.data,
            accountId: opened.accountA,
            // Deterministic: both openers would write the same events, and only one can.
            eventId: uuidv5(`${e.type}:${opened.conversationId}`, EVENT_NAMESPACE),
            occurredAt: opened.openedAt,
          })),
        },
      ]);
      for (const s of stored) await applyToWriteState(em, s);
    });
    ctx.store.committed(ctx.orm);
    return true;
  } catch (err) {
    if (err instanceof ConcurrencyError) return false;
    throw err;
  }
}

/** The conversation matching decided, as its projected match request shows it (or null). */
async function acceptedMatchOf(
  em: EntityManager,
  conversationId: string,
): Promise<ConversationOpened | null> {
  const r = await acceptedMatchOfConversation(em, conversationId);
  if (!r) return null;
  return {
    conversationId,
    matchId: r.matchId,
    threadId: r.threadId,
    accountA: r.requesterAccountId,
    goferA: r.requesterGoferId,
    accountB: r.recipientAccountId,
    goferB: r.recipientGoferId,
    openedAt: r.decidedAt,
  };
}

/** One of the two Gofers if it is deleted (the Gofer read model), else null. */
export async function deletedGoferOf(
  em: EntityManager,
  opened: Pick<ConversationOpened, 'goferA' | 'goferB'>,
): Promise<string | null> {
  return (await deletedGoferAmong(em, [opened.goferA, opened.goferB])) ?? null;
}

/** The matching store's read-your-writes source: its decisions and requests make the matches. */
const MATCHING_SOURCE: WriteSource = 'matching';

/**
 * The conversation for a route: the write state, or — when a client acts on a `match_decided` before
 * the opener reactor ran — opened here from the accepted match the projector already shows. Unknown
 * ids stay unknown (the routes answer 403).
 *
 * Issue 12: the caller may be the one whose decision (or crossing request) made the match a moment
 * ago, and act on its 200 at once, before the projector shows the match: with `accountId`, a missing
 * conversation first waits, bounded as every read-your-writes wait (ADR 0009), until the projector
 * applied that account's own matching writes.
 */
export async function ensureConversation(
  ctx: ConversationContext,
  conversationId: string,
  accountId?: string,
): Promise<void> {
  if (!plausibleId(conversationId)) return;
  const em = ctx.orm.em.fork();
  if (await loadConversation(em, conversationId, false)) return;
  if (accountId !== undefined) await awaitOwnWrites(ctx.orm, ctx.writes, accountId, [MATCHING_SOURCE]);
  const opened = await acceptedMatchOf(em, conversationId);
  if (opened) await openConversation(ctx, opened, await deletedGoferOf(em, opened));
}

/** The caller's open conversation, read without a lock (for reads); else the probe-safe 403. */
export async function assertParticipates(
  ctx: ConversationContext,
  conversationId: string,
  accountId: string,
): Promise<Conversation> {
  await ensureConversation(ctx, conversationId, accountId);
  const loaded = plausibleId(conversationId)
    ? await loadConversation(ctx.orm.em.fork(), conversationId, false)
    : null;
  return assertParticipant(loaded?.conversation ?? null, accountId);
}
