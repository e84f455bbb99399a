import { threadStreamId, type ThreadEvent, type ThreadSide } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

/**
 * The matching context's events of one thread between sides `a` and `b`, keyed by side a's account
 * as the matching service keys them; by default `a` requests the match and `b` receives it.
 */
export function threadOf(threadId: string, a: ThreadSide, b: ThreadSide) {
  const sides = {
    threadId,
    requestId: `r-${threadId}`,
    requesterGoferId: a.goferId,
    requesterAccountId: a.accountId,
    recipientGoferId: b.goferId,
    recipientAccountId: b.accountId,
  };
  return eventBuilders<ThreadEvent>(
    {
      ThreadProposed: () => ({ threadId, mode: 'confirm', a, b, score: 0.6, proposedAt: at(0) }),
      PairingConfirmed: () => ({ threadId, goferId: a.goferId, accountId: a.accountId, confirmedAt: at(1) }),
      ThreadActivated: () => ({ threadId, activatedAt: at(2) }),
      SessionTurnAdded: () => ({
        threadId,
        turnId: `${threadId}-t0`,
        turnIndex: 0,
        senderGoferId: a.goferId,
        content: 'Hello',
        createdAt: at(3),
      }),
      SessionEnded: () => ({ threadId, turnCount: 1, endedAt: at(4) }),
      SummaryCardRecorded: () => ({
        threadId,
        goferId: a.goferId,
        accountId: a.accountId,
        counterpartGoferId: b.goferId,
        messageId: `${threadId}-card-a`,
        version: 1,
        patchKind: null,
        content: 'A summary card',
        cardTitle: 'A good match',
        summary: 'They want the same things.',
        opponentRoleName: b.name,
        otherPartyHighlights: ['remote'],
        actionItems: ['talk'],
        matchRecommendation: 'strong',
        pairReason: 'shared values',
        photos: JSON.stringify([
          { attachmentId: `${b.goferId}-photo`, messageId: null, ownerRoleId: b.goferId },
        ]),
        documents: '[]',
        generatedAt: at(5),
      }),
      MatchRequested: () => ({ ...sides, requestedAt: at(6) }),
      MatchRequestDecided: () => ({
        ...sides,
        status: 'accepted',
        decidedBy: 'recipient',
        matchId: `m-${threadId}`,
        conversationId: `c-${threadId}`,
        decidedAt: at(7),
      }),
      ThreadClosed: () => ({
        threadId,
        reason: 'gofer_deleted',
        goferId: b.goferId,
        accountId: b.accountId,
        closedAt: at(8),
      }),
    },
    ({ data }) => ({ streamId: threadStreamId(data.threadId), partitionKey: a.accountId }),
  );
}
