import { sql } from '@oan/db';
import type { OpenItemsProvider } from './openItems';

/**
 * Open `gofer_question`s for the unresolved digest (§4.3 (10), A33): a question is answered once a
 * later `user` message exists in that Gofer's chat; a deleted Gofer has none open (A35). The same
 * question asked again counts once, as its most recent asking. Reads the projector's tables.
 */
export const openQuestions: OpenItemsProvider = {
  async list(em, accountId) {
    const rows = await sql<{ seq: string; envelope: string; gofer_id: string }>(
      em,
      `select distinct on (q.gofer_id, q.content) q.seq::text as seq, q.envelope, q.gofer_id
         from (select e.seq, e.envelope, e.envelope::jsonb ->> 'goferId' as gofer_id,
                      e.envelope::jsonb -> 'payload' ->> 'content' as content,
                      (e.envelope::jsonb -> 'payload' ->> 'createdAt')::timestamptz as asked_at
                 from read.oan_event e
                where e.account_id = ? and e.type = 'gofer_question') q
         join read.gofers g on g.id = q.gofer_id and g.deleted_at is null
        where not exists (select 1 from read.gofer_messages m
                           where m.gofer_id = q.gofer_id and m.role = 'user' and m.created_at > q.asked_at)
        order by q.gofer_id, q.content, q.seq desc`,
      [accountId],
    );
    return {
      items: rows.map((r) => ({ seq: BigInt(r.seq), envelope: r.envelope })),
      summary: { pendingQuestions: rows.length, goferCount: new Set(rows.map((r) => r.gofer_id)).size },
    };
  },
};
