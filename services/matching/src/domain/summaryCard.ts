import { IllegalStateError, NotFoundError, RejectedError } from './errors.ts';
import type {
  MatchRecommendation,
  PatchKind,
  SummaryCardDocument,
  SummaryCardPhoto,
  SummaryCardRecorded,
  ThreadEvent,
} from '@oan/domain';
import { summaryMessageIdFor } from './ids.ts';
import { cardFingerprint, sidesOf, type ThreadState } from './threadState.ts';

/** The generated fields of one side's card (session.ts produces them from the transcript). */
export interface SessionCardFields {
  content: string;
  cardTitle: string;
  summary: string;
  /** The counterpart's current public name. */
  opponentRoleName: string;
  otherPartyHighlights: string[];
  actionItems: string[];
  matchRecommendation: MatchRecommendation;
  pairReason: string;
}

export interface RecordSummaryCard {
  /** The side the card is for. */
  goferId: string;
  card: SessionCardFields;
  /** Every photo / document the counterpart's Gofer owns now (being paired shares them all). */
  photos: Pick<SummaryCardPhoto, 'attachmentId' | 'width' | 'height'>[];
  documents: Pick<SummaryCardDocument, 'attachmentId' | 'name' | 'mimeType' | 'size'>[];
  /** Why a later version was generated; ignored for the first one (default `metadata_changed`). */
  patchKind: PatchKind | null;
}

/**
 * The session reactor's card for one side, after the session ended. Same content as the current
 * version ⇒ nothing (redelivery); different ⇒ the next version, with `patchKind`. A closed
 * thread gets no more cards: a deleted Gofer stops producing events.
 */
export function recordSummaryCard(state: ThreadState, d: RecordSummaryCard, now: string): ThreadEvent[] {
  if (state.status === 'none') throw new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');
  const sides = sidesOf(state, d.goferId);
  if (!sides) throw new RejectedError('NOT_A_PARTICIPANT', 'Gofer is not in the thread');
  if (state.status === 'closed') return [];
  if (state.status !== 'session_ended')
    throw new IllegalStateError('SESSION_NOT_ENDED', 'Session has not ended');

  const ownerRoleId = sides.other.goferId;
  // `messageId` is essentially always null and `ownerRoleId` always the counterpart.
  const photos: SummaryCardPhoto[] = d.photos.map((p) => ({ ...p, messageId: null, ownerRoleId }));
  const documents: SummaryCardDocument[] = d.documents.map((doc) => ({
    ...doc,
    messageId: null,
    ownerRoleId,
  }));
  const body = {
    threadId: state.threadId,
    goferId: sides.self.goferId,
    accountId: sides.self.accountId,
    counterpartGoferId: ownerRoleId,
    ...d.card,
    photos: JSON.stringify(photos),
    documents: JSON.stringify(documents),
  };
  const current = state.cards.get(d.goferId);
  if (current && current.fingerprint === cardFingerprint(body)) return [];
  const version = (current?.version ?? 0) + 1;
  const data: SummaryCardRecorded = {
    ...body,
    messageId: summaryMessageIdFor(state.threadId, d.goferId, version),
    version,
    patchKind: version === 1 ? null : (d.patchKind ?? 'metadata_changed'),
    generatedAt: now,
  };
  return [{ type: 'SummaryCardRecorded', data }];
}

/** The card's assets back from their JSON text (projector and tests). */
export const cardPhotos = (card: Pick<SummaryCardRecorded, 'photos'>) =>
  JSON.parse(card.photos) as SummaryCardPhoto[];
export const cardDocuments = (card: Pick<SummaryCardRecorded, 'documents'>) =>
  JSON.parse(card.documents) as SummaryCardDocument[];
