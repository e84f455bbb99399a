import { sql, type EntityManager } from '@oan/db';

/**
 * The unresolved digest's queries (what a connector taking over still has to handle): which stored
 * envelopes of an account still wait for it, judged against the read models they concern (the event
 * table, threads, match requests, Gofers and their role-chat). Each returns the original envelopes with
 * their seq.
 */
export interface OpenEnvelopeRow {
  seq: string;
  envelope: string;
}

/**
 * Open decisions:
 * - every `match_request` this account received whose request is still `pending` (decided, or
 *   cancelled by its thread closing, drops it; a cross request decides it too, ADR 0012);
 * - every `pair_proposed` that carried a `reply` (confirm mode; auto-pairs never wait) while its
 *   thread still awaits confirmation and this side (the envelope's `goferId`) has not confirmed.
 * A deleted Gofer has nothing open.
 */
export function openDecisionEnvelopes(em: EntityManager, accountId: string): Promise<OpenEnvelopeRow[]> {
  return sql<OpenEnvelopeRow>(
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
}

/**
 * Open `gofer_question`s: a question is answered once a later `user` message exists in that Gofer's
 * chat; a deleted Gofer has none open. The same question asked again counts once, as its most recent
 * asking.
 */
export function openQuestionEnvelopes(
  em: EntityManager,
  accountId: string,
): Promise<(OpenEnvelopeRow & { goferId: string })[]> {
  return sql<OpenEnvelopeRow & { goferId: string }>(
    em,
    `select distinct on (q.gofer_id, q.content) q.seq::text as seq, q.envelope, q.gofer_id as "goferId"
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
}
