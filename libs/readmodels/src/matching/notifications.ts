import type { ThreadEvent, ThreadSide } from '@oan/domain';
import type { NotificationSpec, ProjectionContext, StoredEvent } from '../types.ts';

/**
 * The matching context's OAN notifications: `pair_proposed` to each side,
 * `session_summary` per card version, `match_request` to the recipient and `match_decided` to both
 * sides. Each is a function of the event (and, for `match_request`, the thread row's public side).
 */

type Event<T extends ThreadEvent['type']> = StoredEvent<Extract<ThreadEvent, { type: T }>>;
type Data = Record<string, unknown>;
const record = (v: unknown): Data => (v !== null && typeof v === 'object' ? (v as Data) : {});

/** `PairingSummaryCard.summaryPreview`: the start of the card's summary. */
export const SUMMARY_PREVIEW_LENGTH = 200;

/** `<OAN_WEB_BASE_URL>/threads/<threadId>` when configured, otherwise no key at all. */
const threadWebUrl = (ctx: ProjectionContext, threadId: string) =>
  ctx.webBaseUrl
    ? { webUrl: `${ctx.webBaseUrl.replace(/\/+$/, '')}/threads/${encodeURIComponent(threadId)}` }
    : {};

/**
 * `pair_proposed`: once per side, nothing about the counterpart beyond its public name and platform; `reply`
 * only when this side must confirm (an auto-pair is informational).
 */
export function pairProposed(
  ctx: ProjectionContext,
  { data: d }: Event<'ThreadProposed'>,
  self: ThreadSide,
  other: ThreadSide,
): NotificationSpec {
  const { threadId } = d;
  return {
    recipient: self.accountId,
    discriminator: self.goferId,
    type: 'pair_proposed',
    source: 'platform',
    goferId: self.goferId,
    threadId,
    ...(d.mode === 'confirm' ? { reply: `/threads/${threadId}/pair/confirm` } : {}),
    ...threadWebUrl(ctx, threadId),
    payload: { counterpartRoleName: other.name, counterpartSourcePlatform: other.sourcePlatform },
    createdAt: d.proposedAt,
  };
}

/** A session summary's SessionSummaryCardPhoto / SessionSummaryCardDocument entries, keys whitelisted. */
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

/** The card's summary cut to `SUMMARY_PREVIEW_LENGTH`, with an ellipsis when cut. */
export function preview(summary: string): string {
  if (summary.length <= SUMMARY_PREVIEW_LENGTH) return summary;
  return `${summary.slice(0, SUMMARY_PREVIEW_LENGTH - 1).trimEnd()}…`;
}

/** A recorded card as the card row and its `session_summary` show it. */
export interface SessionSummary {
  photos: Data[];
  payload: Data;
  note: NotificationSpec;
}

/**
 * `session_summary`: the whitelist, both asset arrays always present, threadId also in the payload,
 * `patchKind` only on a regeneration. Never the counterpart's account or any cursor.
 */
export function sessionSummary(
  ctx: ProjectionContext,
  { data: d }: Event<'SummaryCardRecorded'>,
): SessionSummary {
  const { threadId, goferId } = d;
  const version = Number(d.version);
  const patchKind = d.patchKind ?? null;
  const at = d.generatedAt;
  const photos = assets(d.photos, PHOTO_KEYS);
  const documents = assets(d.documents, DOCUMENT_KEYS);
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
  const note: NotificationSpec = {
    recipient: d.accountId,
    type: 'session_summary',
    source: 'platform',
    goferId,
    threadId,
    ...threadWebUrl(ctx, threadId),
    payload,
    createdAt: at,
  };
  return { photos, payload, note };
}

/** The requester's public snapshot, as the thread row holds it (null when the row is missing). */
export interface PublicSide {
  name: string | null;
  sourcePlatform: string | null;
}

export function matchRequest(
  { data: d }: Event<'MatchRequested'>,
  counterpart: PublicSide,
): NotificationSpec {
  const { threadId, requestId } = d;
  return {
    recipient: d.recipientAccountId,
    type: 'match_request',
    source: 'platform',
    goferId: d.recipientGoferId,
    threadId,
    reply: `/match-requests/${requestId}/decision`,
    // The counterpart's name and platform are both strings (not optional here as in pair_proposed). The
    // thread row precedes the request on its partition; should it ever be missing, the platform is
    // `other` and the name empty.
    payload: {
      requestId,
      counterpartRoleName: counterpart.name ?? '',
      counterpartSourcePlatform: counterpart.sourcePlatform ?? 'other',
    },
    createdAt: d.requestedAt,
  };
}

/** The match and conversation a decision opens: none on a rejection. */
export function decidedIds({ data: d }: Event<'MatchRequestDecided'>): {
  matchId: string | null;
  conversationId: string | null;
} {
  const accepted = d.status === 'accepted';
  return {
    matchId: accepted ? (d.matchId ?? null) : null,
    conversationId: accepted ? (d.conversationId ?? null) : null,
  };
}

/** `match_decided`: both sides, each with its own goferId; a cross request decides alike (ADR 0012). */
export function matchDecided(event: Event<'MatchRequestDecided'>): NotificationSpec[] {
  const d = event.data;
  const { threadId, requestId, status } = d;
  const { matchId, conversationId } = decidedIds(event);
  return (['requester', 'recipient'] as const).map((role) => ({
    recipient: d[`${role}AccountId`],
    discriminator: d[`${role}GoferId`],
    type: 'match_decided' as const,
    source: 'platform' as const,
    goferId: d[`${role}GoferId`],
    threadId,
    ...(conversationId ? { conversationId } : {}),
    payload: { requestId, status, matchId, conversationId },
    createdAt: d.decidedAt,
  }));
}
