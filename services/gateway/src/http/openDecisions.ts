import { openDecisionEnvelopes } from '@oan/readmodels';
import type { OpenItemsProvider } from './openItems.ts';

/**
 * Open decisions for the unresolved digest (`GET /events/unresolved`), counted in `summary.decisions`: pending
 * match requests this account received and pair proposals still waiting for its confirmation — open until decided, or confirmed, rejected or no longer awaited (the
 * query says which exactly). Returns the original stored envelopes (the digest orders them by seq).
 */
export const openDecisions: OpenItemsProvider = {
  async list(em, accountId) {
    const rows = await openDecisionEnvelopes(em, accountId);
    return {
      items: rows.map((r) => ({ seq: BigInt(r.seq), envelope: r.envelope })),
      summary: { decisions: rows.length },
    };
  },
};
