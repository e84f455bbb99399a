import { isoUtc, Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { ThreadEvent } from '@oan/domain';
import { projection, type NotificationSpec, type ProjectionContext, type StoredEvent } from './types.ts';

/**
 * The matching context's read models (docs/adr/0012): threads with both sides' public snapshots,
 * their transcripts, one pairing card per side (§4.4 (18)(19)) and the match requests.
 */
class CreateMatchingReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.threads (
      id text primary key, mode text not null, status text not null,
      a_gofer_id text not null, a_account_id text not null, a_name text not null, a_source_platform text not null,
      a_confirmed_at timestamptz,
      b_gofer_id text not null, b_account_id text not null, b_name text not null, b_source_platform text not null,
      b_confirmed_at timestamptz,
      score double precision not null, turn_count integer not null default 0,
      closed_reason text, closed_by_gofer_id text, match_id text, conversation_id text,
      proposed_at timestamptz not null, activated_at timestamptz, session_ended_at timestamptz,
      closed_at timestamptz, created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql('create index if not exists threads_a_account on read.threads (a_account_id, created_at)');
    this.addSql('create index if not exists threads_b_account on read.threads (b_account_id, created_at)');
    this.addSql('create index if not exists threads_a_gofer on read.threads (a_gofer_id)');
    this.addSql('create index if not exists threads_b_gofer on read.threads (b_gofer_id)');
    this.addSql(`create table if not exists read.thread_messages (
      id text primary key, thread_id text not null, turn_index integer not null,
      sender_gofer_id text not null, content text not null, created_at timestamptz not null,
      unique (thread_id, turn_index))`);
    this.addSql(`create table if not exists read.pairing_cards (
      id text not null unique, thread_id text not null, gofer_id text not null, account_id text not null,
      role_name text not null, pairing_status text not null, dynamic_status text not null,
      paired_at timestamptz not null, updated_at timestamptz not null, card_title text, summary_preview text,
      opponent_gofer_id text not null, opponent_role_name text not null, opponent_source_platform text not null,
      opponent_user_name text, opponent_user_avatar_url text, opponent_profile_title text,
      opponent_profile_info_text text, cover_photo jsonb, photo_count integer not null default 0,
      card_version integer, card_message_id text, card_payload jsonb, card_generated_at timestamptz,
      primary key (thread_id, gofer_id))`);
    this.addSql(
      'create index if not exists pairing_cards_gofer on read.pairing_cards (gofer_id, paired_at desc, thread_id)',
    );
    this.addSql(`create table if not exists read.match_requests (
      id text primary key, thread_id text not null,
      requester_gofer_id text not null, requester_account_id text not null,
      recipient_gofer_id text not null, recipient_account_id text not null,
      status text not null, decided_by text, match_id text, conversation_id text,
      requested_at timestamptz not null, decided_at timestamptz, updated_at timestamptz not null)`);
    this.addSql('create index if not exists match_requests_thread on read.match_requests (thread_id)');
    this.addSql(
      'create index if not exists match_requests_recipient on read.match_requests (recipient_account_id, status)',
    );
  }
}

/** The conversations service opens a conversation from its accepted match request (ADR 0013). */
class IndexMatchRequestsByConversation extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create index if not exists match_requests_conversation on read.match_requests (conversation_id) where conversation_id is not null',
    );
  }
}

/** This read model's tables, in migration order. */
export const matchingTables: MigrationDef[] = [
  { name: 'read-0005-matching', class: CreateMatchingReadModels },
  { name: 'read-0007-match-requests-by-conversation', class: IndexMatchRequestsByConversation },
];

type Event<T extends ThreadEvent['type']> = StoredEvent<Extract<ThreadEvent, { type: T }>>;
type Data = Record<string, unknown>;
const record = (v: unknown): Data => (v !== null && typeof v === 'object' ? (v as Data) : {});

/** `PairingSummaryCard.summaryPreview`: the start of the card's summary. */
export const SUMMARY_PREVIEW_LENGTH = 200;

/** A29: `<OAN_WEB_BASE_URL>/threads/<threadId>` when configured, otherwise no key at all. */
const threadWebUrl = (ctx: ProjectionContext, threadId: string) =>
  ctx.webBaseUrl
    ? { webUrl: `${ctx.webBaseUrl.replace(/\/+$/, '')}/threads/${encodeURIComponent(threadId)}` }
    : {};

/**
 * The matching context's read models (docs/adr/0012): `read.threads`, `read.thread_messages` (the
 * session transcript), `read.pairing_cards` (one row per side: the whitelisted `PairingSummaryCard`
 * of §4.4 (18), `pending` until that side's card is recorded, plus the last `session_summary`
 * payload) and `read.match_requests`; and its notifications (§8.6–8.7): `pair_proposed` to each
 * side, `session_summary` per card version, `match_request` to the recipient and `match_decided` to
 * both sides. Every event of a thread arrives in order on one partition (keyed by side `a`), so a
 * row written by an earlier event of the thread is there when a later one reads it. Every write is
 * guarded to move forward only (the decider's `evolve` transitions), so a redelivered event changes
 * nothing.
 */
export const matchingProjection = projection<ThreadEvent>({
  ThreadProposed: proposed,
  async PairingConfirmed(em, { data: d }) {
    // Only this side's column: the unresolved digest drops its pair_proposed (A33).
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
  MatchRequestDecided: matchDecided,
});

async function proposed(
  em: EntityManager,
  { data: d }: Event<'ThreadProposed'>,
  ctx: ProjectionContext,
): Promise<NotificationSpec[]> {
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
    // §4.4 (18): the card exists from the proposal on, `pending` with null title and preview.
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
    // §8.6: once per side, nothing about the counterpart beyond its public name and platform;
    // `reply` only when this side must confirm (auto-pair: informational, A3).
    notes.push({
      recipient: self.accountId,
      discriminator: self.goferId,
      type: 'pair_proposed',
      source: 'platform',
      goferId: self.goferId,
      threadId,
      ...(mode === 'confirm' ? { reply: `/threads/${threadId}/pair/confirm` } : {}),
      ...threadWebUrl(ctx, threadId),
      payload: { counterpartRoleName: other.name, counterpartSourcePlatform: other.sourcePlatform },
      createdAt: at,
    });
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
  // A request still open when the thread closes is cancelled: it leaves the digest (A33).
  await sql(
    em,
    `update read.match_requests set status = 'cancelled', updated_at = greatest(updated_at, ?)
     where thread_id = ? and status = 'pending'`,
    [at, threadId],
  );
  return [];
}

/** §8.7 SessionSummaryCardPhoto / SessionSummaryCardDocument, keys whitelisted. */
function assets(text: unknown, keys: readonly string[]): Data[] {
  let parsed: unknown;
  try {
    parsed = typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    parsed = [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.map((item) => {
    const r = record(item);
    const out: Data = {};
    for (const k of keys) if (r[k] !== undefined) out[k] = r[k];
    return out;
  });
}
const PHOTO_KEYS = ['attachmentId', 'messageId', 'ownerRoleId', 'width', 'height'] as const;
const DOCUMENT_KEYS = ['attachmentId', 'messageId', 'ownerRoleId', 'name', 'mimeType', 'size'] as const;

function preview(summary: string): string {
  if (summary.length <= SUMMARY_PREVIEW_LENGTH) return summary;
  return `${summary.slice(0, SUMMARY_PREVIEW_LENGTH - 1).trimEnd()}…`;
}

async function summaryCard(
  em: EntityManager,
  { data: d }: Event<'SummaryCardRecorded'>,
  ctx: ProjectionContext,
): Promise<NotificationSpec[]> {
  const { threadId, goferId } = d;
  const version = Number(d.version);
  const patchKind = d.patchKind ?? null;
  const at = d.generatedAt;
  const photos = assets(d.photos, PHOTO_KEYS);
  const documents = assets(d.documents, DOCUMENT_KEYS);
  // §8.7: the whitelist, both asset arrays always present (A22), threadId also in the payload (A23),
  // `patchKind` only on a regeneration. Never the counterpart's account or any cursor.
  const payload: Data = {
    messageId: d.messageId,
    content: d.content,
    createdAt: at,
    kind: 'session_summary',
    summaryKey: `${threadId}:${goferId}`,
    threadId,
    cardTitle: d.cardTitle,
    summary: d.summary,
    opponentRoleName: d.opponentRoleName,
    otherPartyHighlights: [...d.otherPartyHighlights],
    actionItems: [...d.actionItems],
    matchRecommendation: d.matchRecommendation,
    pairReason: d.pairReason,
    photos,
    documents,
    ...(version > 1 && patchKind ? { patchKind } : {}),
  };
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
      threadId,
      goferId,
      version,
    ],
  );
  return [
    {
      recipient: d.accountId,
      type: 'session_summary',
      source: 'platform',
      goferId,
      threadId,
      ...threadWebUrl(ctx, threadId),
      payload,
      createdAt: at,
    },
  ];
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
async function publicSide(
  em: EntityManager,
  threadId: string,
  goferId: string,
): Promise<{ name: string | null; sourcePlatform: string | null }> {
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
  { data: d }: Event<'MatchRequested'>,
): Promise<NotificationSpec[]> {
  const { threadId, requestId } = d;
  const at = d.requestedAt;
  await sql(
    em,
    `insert into read.match_requests (id, thread_id, requester_gofer_id, requester_account_id,
       recipient_gofer_id, recipient_account_id, status, requested_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'pending', ?, ?) on conflict (id) do nothing`,
    [
      requestId,
      threadId,
      d.requesterGoferId,
      d.requesterAccountId,
      d.recipientGoferId,
      d.recipientAccountId,
      at,
      at,
    ],
  );
  const counterpart = await publicSide(em, threadId, d.requesterGoferId);
  return [
    {
      recipient: d.recipientAccountId,
      type: 'match_request',
      source: 'platform',
      goferId: d.recipientGoferId,
      threadId,
      reply: `/match-requests/${requestId}/decision`,
      // §8.6: both are strings (not optional here as in pair_proposed). The thread row precedes the
      // request on its partition; should it ever be missing, the platform is `other` and the name empty.
      payload: {
        requestId,
        counterpartRoleName: counterpart.name ?? '',
        counterpartSourcePlatform: counterpart.sourcePlatform ?? 'other',
      },
      createdAt: at,
    },
  ];
}

async function matchDecided(
  em: EntityManager,
  { data: d }: Event<'MatchRequestDecided'>,
): Promise<NotificationSpec[]> {
  const { threadId, requestId, status } = d;
  const at = d.decidedAt;
  const accepted = status === 'accepted';
  // A26: no match and no conversation on a rejection.
  const matchId = accepted ? (d.matchId ?? null) : null;
  const conversationId = accepted ? (d.conversationId ?? null) : null;
  await sql(
    em,
    `update read.match_requests set status = ?, decided_by = ?, match_id = ?, conversation_id = ?,
       decided_at = ?, updated_at = greatest(updated_at, ?)
     where id = ? and status = 'pending'`,
    [status, d.decidedBy, matchId, conversationId, at, at, requestId],
  );
  if (accepted) {
    await sql(
      em,
      `update read.threads set match_id = coalesce(match_id, ?), conversation_id = coalesce(conversation_id, ?),
         updated_at = greatest(updated_at, ?) where id = ?`,
      [matchId, conversationId, at, threadId],
    );
  }
  // §8.6: both sides, each with its own goferId; a cross request decides the same way (ADR 0012).
  return (['requester', 'recipient'] as const).map((role) => ({
    recipient: d[`${role}AccountId`],
    discriminator: d[`${role}GoferId`],
    type: 'match_decided' as const,
    source: 'platform' as const,
    goferId: d[`${role}GoferId`],
    threadId,
    ...(conversationId ? { conversationId } : {}),
    payload: { requestId, status, matchId, conversationId },
    createdAt: at,
  }));
}

// ---------------------------------------------------------------------------------------------------
// Queries other code may run on these tables (no service writes its own SQL against them).

/**
 * One side's `PairingSummaryCard` (§4.4 (18)), whitelisted: no documents, cursors, action items,
 * account ids or card payload. Title and preview stay null while the card is pending, whatever the
 * row holds.
 */
export interface PairingCardRow {
  id: string;
  threadId: string;
  roleId: string;
  roleName: string;
  pairingStatus: string;
  dynamicStatus: string;
  pairedAt: string;
  updatedAt: string;
  cardTitle: string | null;
  summaryPreview: string | null;
  opponentRoleName: string;
  opponentUserName: string | null;
  opponentUserAvatarUrl: string | null;
  opponentProfileTitle: string | null;
  opponentProfileInfoText: string | null;
  coverPhoto: Record<string, unknown> | null;
  photoCount: number;
}

const CARDS = `select c.id, c.thread_id as "threadId", c.gofer_id as "roleId", c.role_name as "roleName",
    c.pairing_status as "pairingStatus", c.dynamic_status as "dynamicStatus",
    ${isoUtc('c.paired_at')} as "pairedAt", ${isoUtc('c.updated_at')} as "updatedAt",
    case when c.dynamic_status = 'pending' then null else c.card_title end as "cardTitle",
    case when c.dynamic_status = 'pending' then null else c.summary_preview end as "summaryPreview",
    c.opponent_role_name as "opponentRoleName", c.opponent_user_name as "opponentUserName",
    c.opponent_user_avatar_url as "opponentUserAvatarUrl", c.opponent_profile_title as "opponentProfileTitle",
    c.opponent_profile_info_text as "opponentProfileInfoText", c.cover_photo as "coverPhoto",
    c.photo_count::int as "photoCount"
  from read.pairing_cards c where c.gofer_id = ?`;

/** A Gofer's cards, newest pairing first, at most `limit`. */
export function pairingCardsOf(em: EntityManager, goferId: string, limit: number): Promise<PairingCardRow[]> {
  return sql<PairingCardRow>(em, `${CARDS} order by c.paired_at desc, c.thread_id limit ?`, [goferId, limit]);
}

/** A Gofer's card in one thread, or undefined when it has none there. */
export async function pairingCardOf(
  em: EntityManager,
  goferId: string,
  threadId: string,
): Promise<PairingCardRow | undefined> {
  const [row] = await sql<PairingCardRow>(em, `${CARDS} and c.thread_id = ?`, [goferId, threadId]);
  return row;
}

/** The ids of every projected thread a Gofer is a side of. */
export async function threadIdsOfGofer(em: EntityManager, goferId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    'select id from read.threads where a_gofer_id = ? or b_gofer_id = ?',
    [goferId, goferId],
  );
  return rows.map((r) => r.id);
}

/** The accepted match request that opened a conversation, as the read model shows it. */
export interface AcceptedMatchRow {
  threadId: string;
  matchId: string;
  requesterAccountId: string;
  requesterGoferId: string;
  recipientAccountId: string;
  recipientGoferId: string;
  decidedAt: string;
}

export async function acceptedMatchOfConversation(
  em: EntityManager,
  conversationId: string,
): Promise<AcceptedMatchRow | undefined> {
  const [row] = await sql<AcceptedMatchRow>(
    em,
    `select thread_id as "threadId", match_id as "matchId", requester_account_id as "requesterAccountId",
            requester_gofer_id as "requesterGoferId", recipient_account_id as "recipientAccountId",
            recipient_gofer_id as "recipientGoferId", ${isoUtc('decided_at')} as "decidedAt"
       from read.match_requests where conversation_id = ? and status = 'accepted' and match_id is not null
      limit 1`,
    [conversationId],
  );
  return row;
}
