import { openQuestionEnvelopes } from '@oan/readmodels';
import type { OpenItemsProvider } from './openItems.ts';

/**
 * Open `gofer_question`s for the unresolved digest (`GET /events/unresolved`): questions not answered by a
 * later owner message, counted once per Gofer and content, with the Gofers they come from.
 */
export const openQuestions: OpenItemsProvider = {
  async list(em, accountId) {
    const rows = await openQuestionEnvelopes(em, accountId);
    return {
      items: rows.map((r) => ({ seq: BigInt(r.seq), envelope: r.envelope })),
      summary: { pendingQuestions: rows.length, goferCount: new Set(rows.map((r) => r.goferId)).size },
    };
  },
};
