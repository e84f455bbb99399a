import { sql } from '@oan/db';
import type { OpenItemsProvider } from './openItems';

/**
 * Open decisions for the unresolved digest (§4.3 (10), A33), counted in `summary.decisions`:
 * - every `match_request` this account received whose request is still `pending` (decided, or
 *   cancelled by its thread closing, drops it; a cross request decides it too, ADR 0012);
 * - every `pair_proposed` that carried a `reply` (confirm mode; auto-pairs never wait, A3) while its
 *   thread still awaits confirmation and this side (the envelope's `goferId`) has not confirmed.
 * A deleted Gofer has nothing open (A35). Returns the original stored envelopes (the digest orders them by seq). Reads the
 * projector's tables (`read.match_requests`, `read.threads`, `read.gofers`).
 */
export const openDecisions: OpenItemsProvider = {
  async list(em, accountId) {
    const rows = await sql<{ seq: string; envelope: string }>(
      em,
      `select e.seq::text as seq, e.envelope
         from read.oan_event e
         join read.match_requests r on r.id = e.envelope::jsonb -> 'payload' ->> 'requestId'
        where e.account_id = ? and e.type = 'match_request'
          and r.recipient_account_id = e.account_id and r.status = 'pending'
          and not exists (select 1 from read.gofers g where g.id = r.recipient_gofer_id and g.deleted_at is not null)
       union all
       select e.seq::text as seq, e.envelope
         from read.oan_event e
         join read.threads t on t.id = e.envelope::jsonb ->> 'threadId'
        where e.account_id = ? and e.type = 'pair_proposed'
          and (e.envelope::jsonb -> 'reply') is not null
          and t.status = 'awaiting_confirmation'
          and ((t.a_gofer_id = e.envelope::jsonb ->> 'goferId' and t.a_account_id = e.account_id
                and t.a_confirmed_at is null)
            or (t.b_gofer_id = e.envelope::jsonb ->> 'goferId' and t.b_account_id = e.account_id
                and t.b_confirmed_at is null))
          and not exists (select 1 from read.gofers g
                           where g.id = e.envelope::jsonb ->> 'goferId' and g.deleted_at is not null)`,
      [accountId, accountId],
    );
    return {
      items: rows.map((r) => ({ seq: BigInt(r.seq), envelope: r.envelope })),
      summary: { decisions: rows.length },
    };
  },
};
