import type { EntityManager, MikroORM } from '@oan/db';
import { commandHandler, type CommandHandler, type EventStore, type StoredEvent } from '@oan/eventstore';
import { awaitOwnWrites, type WriteSource, type WriteTracker } from '@oan/projection';
import { acceptedMatchOfConversation, deletedGoferAmong } from '@oan/readmodels';
import { v5 as uuidv5 } from 'uuid';
import { assertParticipant, conversationDecider, type ConversationCommand } from '../domain/conversation.ts';
import type { Conversation, ConversationState } from '../domain/conversationState.ts';
import { conversationForbidden } from '../domain/errors.ts';
import { conversationStreamId, type ConversationOpened } from '@oan/domain';
import { conversationSnapshot, loadConversation } from '../infra/store.ts';

/** What every command handler, route and reactor of the conversations service needs. */
export interface ConversationContext {
  orm: MikroORM;
  /** `EventStore('conversations', avroEventValidator(registry))` (src/infra/store.ts). */
  store: EventStore;
  /** Records each command's last position so the writer's next reads wait for the projector. */
  writes: WriteTracker;
  now: () => Date;
  /**
   * Added to `now` for every command: 0, unless the QA clock knob is on (CONVERSATIONS_QA_CLOCK,
   * refused in production), which lets a test move the clock without sleeping (src/infra/qaClock.ts).
   */
  clockOffsetMs: () => Promise<number>;
  /** Fresh ids (randomUUID) for messages, revisions and attachments. */
  ids: () => string;
}

/** The read-your-writes source name of this event store (topic `conversations.events`). */
export const WRITE_SOURCE: WriteSource = 'conversations';

/** An id that can exist (UUIDs); anything else is answered as unknown without a query. */
export const plausibleId = (id: string) => /^[A-Za-z0-9_-]{1,128}$/.test(id);

/** The Kafka key of a command's events: the acting account (its partition orders them). */
function keyAccountOf(command: ConversationCommand, state: ConversationState): string {
  switch (command.type) {
    // Opening and closing by side a: the projector sees a close after its opening.
    case 'OpenConversation':
      return command.data.opened.accountA;
    case 'CloseForDeletedGofer':
      if (state.status === 'none') throw new Error('Only an opened conversation closes');
      return state.accountA;
    // The acting account; for a key notice the account whose key changed (the other side is told).
    case 'UploadAttachment':
    case 'SendMessage':
    case 'ReviseMessage':
    case 'NoticeKeyChange':
      return command.data.accountId;
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

/** Namespace of the ids of the events an opener writes (never change it). */
const EVENT_NAMESPACE = '3b7d2f4e-8a61-4c0f-9e25-6d1a7c9b0e43';

/** A command on a conversation this service has not opened yet, to be opened first. */
class Unopened extends Error {}

/** Builds a command in the command's transaction, from the state and the index rows it needs. */
type CommandOn = (
  em: EntityManager,
  state: ConversationState,
) => Promise<ConversationCommand> | ConversationCommand;

/**
 * The conversation aggregate's command handler: load → decide → append on
 * `conversation-<conversationId>`, with the conversation's snapshot row as the state (locked:
 * commands on one conversation queue instead of failing their version check), saved with the index
 * rows of the events, all in one transaction (ADR 0013). The events an opener writes have
 * deterministic ids and the match's time: both openers would write the same events, and only one
 * can. The actor's position is remembered for its next reads (an opening is the reactor's, not a
 * reader's).
 */
const conversationCommands = (
  ctx: ConversationContext,
  clockOffsetMs: number,
): CommandHandler<ConversationState, ConversationCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    decider: conversationDecider,
    // Read under the conversation's lock, so times follow the order of the decisions.
    now: () => new Date(ctx.now().getTime() + clockOffsetMs),
    partitionKey: (state, _events, command) => keyAccountOf(command, state),
    stamp: (e, c) =>
      c.type === 'OpenConversation'
        ? {
            eventId: uuidv5(`${e.type}:${c.data.opened.conversationId}`, EVENT_NAMESPACE),
            occurredAt: c.data.opened.openedAt,
          }
        : {},
    // An opening and a key notice are the reactors', not a reader's own writes.
    remember: async (last, _callers, command) => {
      if (command.type !== 'OpenConversation' && command.type !== 'NoticeKeyChange')
        await ctx.writes.remember(last.partitionKey, WRITE_SOURCE, last.position);
    },
  });

/**
 * One command on `conversation-<conversationId>` (`conversationCommands`). With `openFirst`, a
 * conversation not opened yet throws `Unopened` before anything is decided.
 */
async function decideOn(
  ctx: ConversationContext,
  conversationId: string,
  command: CommandOn,
  openFirst: boolean,
  commandId?: string,
) {
  const offsetMs = await ctx.clockOffsetMs();
  return conversationCommands(ctx, offsetMs)(
    conversationStreamId(conversationId),
    async (state, em) => {
      if (openFirst && state.status === 'none') throw new Unopened();
      return command(em, state);
    },
    { snapshot: conversationSnapshot(conversationId), ...(commandId === undefined ? {} : { commandId }) },
  );
}

/**
 * One command on a conversation (`decideOn`, which remembers the actor's position for its next
 * reads). `command` is built in the command's transaction, so it can carry the index rows its
 * decision needs (the files a message names, the message a recall names).
 */
export async function runConversationCommand(
  ctx: ConversationContext,
  conversationId: string,
  command: CommandOn,
  /** `commandId`: an internal caller's, so the command runs once however often it is sent. */
  opts: { openFor?: string; commandId?: string | undefined } = {},
): Promise<{ state: ConversationState; appended: StoredEvent[] }> {
  if (!plausibleId(conversationId)) throw conversationForbidden();
  let result: Awaited<ReturnType<typeof decideOn>>;
  try {
    result = await decideOn(ctx, conversationId, command, opts.openFor !== undefined, opts.commandId);
  } catch (err) {
    if (!(err instanceof Unopened)) throw err;
    // With `openFor` (the caller's account): a conversation this service has not opened yet (its
    // accepted match request is there, the opener reactor has not run) is opened first, then the
    // command runs — found missing inside the command's own transaction, so a command on an open
    // conversation reads it once.
    await ensureConversation(ctx, conversationId, opts.openFor);
    result = await decideOn(ctx, conversationId, command, false, opts.commandId);
  }
  return result;
}

/**
 * Starts a conversation's stream (the opener reactor, or a route that meets a conversation the
 * reactor has not opened yet). Idempotent: a conversation opens once; a second opener appends nothing
 * and returns false. A Gofer already deleted closes it at once.
 */
export async function openConversation(
  ctx: ConversationContext,
  opened: ConversationOpened,
  deletedGoferId: string | null,
): Promise<boolean> {
  const command: CommandOn = () => ({ type: 'OpenConversation', data: { opened, deletedGoferId } });
  const { appended } = await decideOn(ctx, opened.conversationId, command, false);
  return appended.length > 0;
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
 * The caller may be the one whose decision (or crossing request) made the match a moment
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
  if (await loadConversation(em, conversationId, { lock: false })) return;
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
    ? await loadConversation(ctx.orm.em.fork(), conversationId, { lock: false })
    : null;
  return assertParticipant(loaded?.state ?? { status: 'none' }, accountId);
}
