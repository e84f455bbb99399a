import { sql, type EntityManager } from '@oan/db';

/**
 * When a stored decision is settled, judged against the read models it concerns: the reference's
 * "answered" (a decision counts as answered once whatever a connector's reply path would have
 * done is in the read models, however it got there) and the runtimes' supersession (ADR 0032) are
 * one definition. It serves the unresolved digest (what is still open) and the runtimes (which
 * jobs to close as superseded).
 *
 * `settledSql(e)` is a boolean SQL expression over a row `e` of `read.oan_event`; it is true on
 * evidence only (a missing read-model row settles nothing):
 * - `gofer_message`, `gofer_question`: a `user` message in that Gofer's role-chat after the
 *   envelope's `payload.createdAt`, however it was sent (web page, a connector, REST);
 * - `match_request`: its request (`payload.requestId`) is no longer `pending` (decided, cancelled by
 *   its thread closing, or decided by a cross request, ADR 0012);
 * - `pair_proposed`: its thread no longer awaits confirmation, or this side (`goferId`) confirmed;
 * - `relay_message`: this account wrote a later message in the conversation;
 * - any type naming a Gofer (`goferId`) that was deleted.
 * Every probe is an index lookup (the read models' primary keys, `gofer_messages_chat`, the
 * conversation's `(conversation_id, change_sequence)`).
 */
export function settledSql(e: string): string {
  const j = `(${e}.envelope::jsonb)`;
  return `(case ${e}.type
    when 'gofer_message' then ${chatAnswered(j)}
    when 'gofer_question' then ${chatAnswered(j)}
    when 'match_request' then exists (select 1 from read.match_requests r
        where r.id = ${j} -> 'payload' ->> 'requestId' and r.status <> 'pending')
    when 'pair_proposed' then exists (select 1 from read.threads t
        where t.id = ${j} ->> 'threadId'
          and (t.status <> 'awaiting_confirmation'
            or (t.a_gofer_id = ${j} ->> 'goferId' and t.a_account_id = ${e}.account_id and t.a_confirmed_at is not null)
            or (t.b_gofer_id = ${j} ->> 'goferId' and t.b_account_id = ${e}.account_id and t.b_confirmed_at is not null)))
    when 'relay_message' then exists (select 1 from read.conversation_messages m
          join read.conversation_messages own on own.conversation_id = m.conversation_id
           and own.change_sequence > m.change_sequence and own.sender_account_id = ${e}.account_id
        where m.id = ${j} -> 'payload' ->> 'messageId')
    else false end
    or exists (select 1 from read.gofers g where g.id = ${j} ->> 'goferId' and g.deleted_at is not null))`;
}

const chatAnswered = (j: string) => `exists (select 1 from read.gofer_messages m
    where m.gofer_id = ${j} ->> 'goferId' and m.role = 'user'
      and m.created_at > (${j} -> 'payload' ->> 'createdAt')::timestamptz)`;

/** Of these stored envelopes of the account (by event id), the ones whose decision is settled. */
export async function settledEventIds(
  em: EntityManager,
  accountId: string,
  eventIds: readonly string[],
): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const rows = await sql<{ event_id: string }>(
    em,
    `select e.event_id::text as event_id from read.oan_event e
      where e.event_id in (select jsonb_array_elements_text(?::jsonb)::uuid) and e.account_id = ?
        and ${settledSql('e')}`,
    [JSON.stringify(eventIds), accountId],
  );
  return new Set(rows.map((r) => r.event_id));
}

/**
 * The unresolved digest's queries (what a connector taking over still has to handle): the stored
 * envelopes of an account not settled yet (`settledSql`), with their seq.
 */
export interface OpenEnvelopeRow {
  seq: string;
  envelope: string;
}

/**
 * Open decisions: every `match_request` this account received whose request is still pending, and
 * every `pair_proposed` that carried a `reply` (confirm mode; auto-pairs never wait) while its thread
 * still awaits this side's confirmation.
 */
export function openDecisionEnvelopes(em: EntityManager, accountId: string): Promise<OpenEnvelopeRow[]> {
  return sql<OpenEnvelopeRow>(
    em,
    `select e.seq::text as seq, e.envelope
       from read.oan_event e
      where e.account_id = ?
        and (e.type = 'match_request'
          or (e.type = 'pair_proposed' and (e.envelope::jsonb -> 'reply') is not null))
        and not ${settledSql('e')}
      order by e.seq`,
    [accountId],
  );
}

/**
 * Open `gofer_question`s: not settled by a later `user` message in that Gofer's chat, nor by its
 * deletion. The same question asked again counts once, as its most recent asking.
 */
export function openQuestionEnvelopes(
  em: EntityManager,
  accountId: string,
): Promise<(OpenEnvelopeRow & { goferId: string })[]> {
  return sql<OpenEnvelopeRow & { goferId: string }>(
    em,
    `select distinct on (q.gofer_id, q.content) q.seq::text as seq, q.envelope, q.gofer_id as "goferId"
       from (select e.seq, e.envelope, e.envelope::jsonb ->> 'goferId' as gofer_id,
                    e.envelope::jsonb -> 'payload' ->> 'content' as content
               from read.oan_event e
              where e.account_id = ? and e.type = 'gofer_question' and not ${settledSql('e')}) q
      order by q.gofer_id, q.content, q.seq desc`,
    [accountId],
  );
}
