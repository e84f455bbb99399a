import { isoUtc, sql, type EntityManager } from '@oan/db';

// Queries other code may run on the matching tables (no service writes its own SQL against them).

/**
 * One side's `PairingSummaryCard`, whitelisted: no documents, cursors, action items,
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
