import type { EntityManager } from '@oan/db';
import type { UnresolvedSummary } from './schemas.ts';

/** One open item of the unresolved digest: its original stored envelope text, as first delivered. */
export interface OpenItem {
  seq: bigint;
  envelope: string;
}

/**
 * A source of open items for `GET /events/unresolved` (open questions, undecided match requests,
 * pairings awaiting confirmation). Later issues plug one in per kind; the route merges them.
 */
export interface OpenItemsProvider {
  list(
    em: EntityManager,
    accountId: string,
  ): Promise<{ items: OpenItem[]; summary: Partial<UnresolvedSummary> }>;
}

export interface UnresolvedDigest {
  items: OpenItem[];
  summary: UnresolvedSummary;
}

/** Merges every provider's items by seq and adds up their counts (zeros when there are none). */
export async function unresolvedDigest(
  providers: readonly OpenItemsProvider[],
  em: EntityManager,
  accountId: string,
): Promise<UnresolvedDigest> {
  const parts = await Promise.all(providers.map((p) => p.list(em, accountId)));
  const summary: UnresolvedSummary = { pendingQuestions: 0, goferCount: 0, decisions: 0 };
  const items: OpenItem[] = [];
  for (const part of parts) {
    items.push(...part.items);
    summary.pendingQuestions += part.summary.pendingQuestions ?? 0;
    summary.goferCount += part.summary.goferCount ?? 0;
    summary.decisions += part.summary.decisions ?? 0;
  }
  items.sort((x, y) => (x.seq < y.seq ? -1 : x.seq > y.seq ? 1 : 0));
  return { items, summary };
}
