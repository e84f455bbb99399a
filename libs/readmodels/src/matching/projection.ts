/* eslint-disable max-lines -- Over 250 lines for a reason: one handler per thread event, each
 * write's SQL and its forward-only guard spelled out beside it, so the idempotency of every write
 * can be read in one place.
 */
import { sql, type EntityManager } from '@oan/db';
import type { ThreadEvent } from '@oan/domain';
import { projection, type NotificationSpec, type ProjectionContext, type StoredEvent } from '../types.ts';
import {
  decidedIds,
  matchDecided,
  matchRequest,
  pairProposed,
  preview,
  sessionSummary,
  type PublicSide,
} from './notifications.ts';

type Event<T extends ThreadEvent['type']> = StoredEvent<Extract<ThreadEvent, { type: T }>>;

/**
 * The matching context's projection (docs/adr/0012): `read.threads`, `read.thread_messages` (the
 * session transcript), `read.pairing_cards` (one row per side: the whitelisted `PairingSummaryCard`
 * of a Gofer's pairings list, `pending` until that side's card is recorded, plus the last `session_summary`
 * payload) and `read.match_requests`, and the notifications of `notifications.ts`. Every event of a
 * thread arrives in order on one partition (keyed by side `a`), so a row written by an earlier event
 * of the thread is there when a later one reads it. Every write is guarded to move forward only (the
 * decider's `evolve` transitions), so a redelivered event changes nothing.
 */
export const matchingProjection = projection<ThreadEvent>({
  ThreadProposed: proposed,
  async PairingConfirmed(em, { data: d }) {
    // Only this side's column: the unresolved digest drops its pair_proposed.
    await sql(
      em,
      `update read.threads set
         a_confirmed_at = case when a_gofer_id = ? then coalesce(a_confirmed_at, ?) else a_confirmed_at end,
         b_confirmed_at = case when b_gofer_id = ? then coalesce(b_confirmed_at, ?) else b_confirmed_at end,
         updated_at = greatest(updated_at, ?)
       where id = ?`,
      [d.goferId, d.confirmedAt, d.goferId, d.confirmedAt, d.confirmedAt, d.threadId],
    );
    return [];
  },
  async ThreadActivated(em, { data: d }) {
    await transition(em, d.threadId, 'awaiting_confirmation', 'active', d.activatedAt, 'activated_at');
    return [];
  },
  async SessionEnded(em, { data: d }) {
    await transition(em, d.threadId, 'active', 'session_ended', d.endedAt, 'session_ended_at');
    return [];
  },
  ThreadClosed: closed,
  async SessionTurnAdded(em, { data: d }) {
    await sql(
      em,
      `insert into read.thread_messages (id, thread_id, turn_index, sender_gofer_id, content, created_at)
       values (?, ?, ?, ?, ?, ?) on conflict do nothing`,
      [d.turnId, d.threadId, Number(d.turnIndex), d.senderGoferId, d.content, d.createdAt],
    );
    await sql(
      em,
      `update read.threads set
         turn_count = (select count(*) from read.thread_messages m where m.thread_id = threads.id),
         updated_at = greatest(updated_at, ?)
       where id = ?`,
      [d.createdAt, d.threadId],
    );
    return [];
  },
  SummaryCardRecorded: summaryCard,
  MatchRequested: matchRequested,
  MatchRequestDecided: matchRequestDecided,
});

async function proposed(
  em: EntityManager,
  event: Event<'ThreadProposed'>,
  ctx: ProjectionContext,
): Promise<NotificationSpec[]> {
  const d = event.data;
  const { threadId, mode, a, b } = d;
  const at = d.proposedAt;
  await sql(
    em,
    `insert into read.threads (id, mode, status, a_gofer_id, a_account_id, a_name, a_source_platform,
       b_gofer_id, b_account_id, b_name, b_source_platform, score, proposed_at, created_at, updated_at)
     values (?, ?, 'awaiting_confirmation', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (id) do nothing`,
    [
      threadId,
      mode,
      a.goferId,
      a.accountId,
      a.name,
      a.sourcePlatform,
      b.goferId,
      b.accountId,
      b.name,
      b.sourcePlatform,
      Number(d.score),
      at,
      at,
      at,
    ],
  );
  const notes: NotificationSpec[] = [];
  for (const [self, other] of [
    [a, b],
    [b, a],
  ] as const) {
    // The pairing card exists from the proposal on, `pending` with null title and preview.
    await sql(
      em,
      `insert into read.pairing_cards (id, thread_id, gofer_id, account_id, role_name, pairing_status,
         dynamic_status, paired_at, updated_at, opponent_gofer_id, opponent_role_name, opponent_source_platform)
       values (?, ?, ?, ?, ?, 'awaiting_confirmation', 'pending', ?, ?, ?, ?, ?) on conflict do nothing`,
      [
        `${threadId}:${self.goferId}`,
        threadId,
        self.goferId,
        self.accountId,
        self.name,
        at,
        at,
        other.goferId,
        other.name,
        other.sourcePlatform,
      ],
    );
    notes.push(pairProposed(ctx, event, self, other));
  }
  return notes;
}

/** A forward-only status change of the thread and of both its cards (`evolveThread`'s guards). */
async function transition(
  em: EntityManager,
  threadId: string,
  from: string,
  to: string,
  at: string,
  column: 'activated_at' | 'session_ended_at',
): Promise<void> {
  await sql(
    em,
    `update read.threads set status = ?, ${column} = ?, updated_at = greatest(updated_at, ?)
     where id = ? and status = ?`,
    [to, at, at, threadId, from],
  );
  await sql(
    em,
    `update read.pairing_cards set pairing_status = ?, updated_at = greatest(updated_at, ?)
     where thread_id = ? and pairing_status = ?`,
    [to, at, threadId, from],
  );
}

async function closed(em: EntityManager, { data: d }: Event<'ThreadClosed'>): Promise<NotificationSpec[]> {
  const { threadId } = d;
  const at = d.closedAt;
  await sql(
    em,
    `update read.threads set status = 'closed', closed_reason = ?, closed_by_gofer_id = ?, closed_at = ?,
       updated_at = greatest(updated_at, ?)
     where id = ? and status <> 'closed'`,
    [d.reason, d.goferId, at, at, threadId],
  );
  await sql(
    em,
    `update read.pairing_cards set pairing_status = 'closed', updated_at = greatest(updated_at, ?)
     where thread_id = ? and pairing_status <> 'closed'`,
    [at, threadId],
  );
  // A request still open when the thread closes is cancelled: it leaves the unresolved digest.
  await sql(
    em,
    `update read.match_requests set status = 'cancelled', updated_at = greatest(updated_at, ?)
     where thread_id = ? and status = 'pending'`,
    [at, threadId],
  );
  return [];
}

async function summaryCard(
  em: EntityManager,
  event: Event<'SummaryCardRecorded'>,
  ctx: ProjectionContext,
): Promise<NotificationSpec[]> {
  const d = event.data;
  const version = Number(d.version);
  const at = d.generatedAt;
  const { photos, payload, note } = sessionSummary(ctx, event);
  // A redelivered older version never overwrites a newer one.
  await sql(
    em,
    `update read.pairing_cards set dynamic_status = 'ready', card_title = ?, summary_preview = ?,
       opponent_role_name = ?, cover_photo = ?::jsonb, photo_count = ?, card_version = ?, card_message_id = ?,
       card_payload = ?::jsonb, card_generated_at = ?, updated_at = greatest(updated_at, ?)
     where thread_id = ? and gofer_id = ? and (card_version is null or card_version < ?)`,
    [
      d.cardTitle,
      preview(d.summary),
      d.opponentRoleName,
      photos[0] ? JSON.stringify(photos[0]) : null,
      photos.length,
      version,
      d.messageId,
      JSON.stringify(payload),
      at,
      at,
      d.threadId,
      d.goferId,
      version,
    ],
  );
  return [note];
}

interface ThreadSides {
  a_gofer_id: string;
  a_name: string;
  a_source_platform: string;
  b_gofer_id: string;
  b_name: string;
  b_source_platform: string;
}

/** The public snapshot of `goferId`'s side of the thread (the proposal's). */
async function publicSide(em: EntityManager, threadId: string, goferId: string): Promise<PublicSide> {
  const [t] = await sql<ThreadSides>(
    em,
    `select a_gofer_id, a_name, a_source_platform, b_gofer_id, b_name, b_source_platform
       from read.threads where id = ?`,
    [threadId],
  );
  if (t?.a_gofer_id === goferId) return { name: t.a_name, sourcePlatform: t.a_source_platform };
  if (t?.b_gofer_id === goferId) return { name: t.b_name, sourcePlatform: t.b_source_platform };
  return { name: null, sourcePlatform: null };
}

async function matchRequested(
  em: EntityManager,
  event: Event<'MatchRequested'>,
): Promise<NotificationSpec[]> {
  const d = event.data;
  const at = d.requestedAt;
  await sql(
    em,
    `insert into read.match_requests (id, thread_id, requester_gofer_id, requester_account_id,
       recipient_gofer_id, recipient_account_id, status, requested_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'pending', ?, ?) on conflict (id) do nothing`,
    [
      d.requestId,
      d.threadId,
      d.requesterGoferId,
      d.requesterAccountId,
      d.recipientGoferId,
      d.recipientAccountId,
      at,
      at,
    ],
  );
  return [matchRequest(event, await publicSide(em, d.threadId, d.requesterGoferId))];
}

async function matchRequestDecided(
  em: EntityManager,
  event: Event<'MatchRequestDecided'>,
): Promise<NotificationSpec[]> {
  const d = event.data;
  const at = d.decidedAt;
  // No match and no conversation on a rejection.
  const { matchId, conversationId } = decidedIds(event);
  await sql(
    em,
    `update read.match_requests set status = ?, decided_by = ?, match_id = ?, conversation_id = ?,
       decided_at = ?, updated_at = greatest(updated_at, ?)
     where id = ? and status = 'pending'`,
    [d.status, d.decidedBy, matchId, conversationId, at, at, d.requestId],
  );
  if (d.status === 'accepted') {
    await sql(
      em,
      `update read.threads set match_id = coalesce(match_id, ?), conversation_id = coalesce(conversation_id, ?),
         updated_at = greatest(updated_at, ?) where id = ?`,
      [matchId, conversationId, at, d.threadId],
    );
  }
  return matchDecided(event);
}
