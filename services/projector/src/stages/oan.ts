import { copyRows, sql, type EntityManager } from '@oan/db';
import { MOVED_CTE, movedParams, type OffsetMove } from '@oan/projection';
import { ENVELOPE_HEAD, envelopeRest, envelopeText, type Notification } from '../notifications.ts';
import { scrubRetracted } from './scrub.ts';

/**
 * From this many new rows in a batch, they go by COPY (ADR 0052): below it, the JSON statement's one
 * round trip costs less than COPY's three.
 */
export const COPY_FROM_ROWS = 64;

/** The recipients' new last seqs, from one JSON parameter. */
const UPSERT_SEQS = `insert into read.oan_account_seq (account_id, last_seq)
   select account_id, last_seq from jsonb_to_recordset(?::jsonb) as x(account_id text, last_seq bigint)
   on conflict (account_id) do update set last_seq = excluded.last_seq`;

export interface CommittedEnvelope {
  accountId: string;
  seq: bigint;
  envelope: string;
}

/**
 * Stage 2 (per-account order, a deterministic seq): gives each notification of one `oan.events`
 * partition batch its dense per-account seq, in partition order, and writes the rows. A notification
 * whose eventId is already stored (an at-least-once redelivery from stage 1) is skipped before a seq is
 * taken, so replaying the topic from zero reproduces the same seqs. A retraction then scrubs the
 * rows that carried its message's content (`scrubRetracted`). Runs inside the batch's transaction.
 */
export async function writeEnvelopes(em: EntityManager, batch: Notification[]): Promise<CommittedEnvelope[]> {
  if (batch.length === 0) return [];
  // One round trip: which eventIds are stored already, and each recipient's last seq (row-locked).
  const lookup = await sql<{ kind: 'known' | 'seq'; id: string; last_seq: string | null }>(
    em,
    `with seqs as (
       select account_id, last_seq from read.oan_account_seq
        where account_id in (select value from jsonb_array_elements_text(?::jsonb)) for update
     )
     select 'known' as kind, event_id::text as id, null as last_seq from read.oan_event
      where event_id in (select value::uuid from jsonb_array_elements_text(?::jsonb))
     union all
     select 'seq', account_id, last_seq::text from seqs`,
    [
      JSON.stringify([...new Set(batch.map((n) => n.accountId))]),
      JSON.stringify(batch.map((n) => n.eventId)),
    ],
  );
  const seen = new Set(lookup.filter((r) => r.kind === 'known').map((r) => r.id));
  const last = new Map(
    lookup.filter((r) => r.kind === 'seq').map((r) => [r.id, BigInt(r.last_seq ?? '0')] as const),
  );
  const fresh: Notification[] = [];
  for (const n of batch) {
    if (seen.has(n.eventId)) continue;
    seen.add(n.eventId);
    fresh.push(n);
  }
  if (fresh.length === 0) return [];

  const out: CommittedEnvelope[] = [];
  const touched = new Set<string>();
  for (const n of fresh) {
    const seq = (last.get(n.accountId) ?? 0n) + 1n;
    last.set(n.accountId, seq);
    touched.add(n.accountId);
    out.push({ accountId: n.accountId, seq, envelope: envelopeText(n, seq) });
  }
  const seqs = JSON.stringify(
    [...touched].map((account_id) => ({ account_id, last_seq: last.get(account_id)!.toString() })),
  );
  if (out.length >= COPY_FROM_ROWS) {
    // A large batch (a replay, a backlog): COPY, whose text Postgres reads at half the cost of the
    // JSON document below, then the recipients' new last seqs.
    await copyRows(
      em,
      'read.oan_event',
      ['account_id', 'seq', 'event_id', 'type', 'envelope', 'created_at'],
      out.map((o, i) => [
        o.accountId,
        o.seq.toString(),
        fresh[i]!.eventId,
        fresh[i]!.type,
        o.envelope,
        fresh[i]!.createdAt,
      ]),
    );
    await sql(em, UPSERT_SEQS, [seqs]);
  } else {
    // Array parameters expand into lists, so rows travel as one JSON document; the rows and the
    // recipients' new last seqs in one statement (one round trip, where COPY takes three).
    const rows = out.map((o, i) => ({
      account_id: o.accountId,
      seq: o.seq.toString(),
      event_id: fresh[i]!.eventId,
      type: fresh[i]!.type,
      envelope: o.envelope,
      created_at: fresh[i]!.createdAt,
    }));
    await sql(
      em,
      `with events as (
         insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
         select account_id, seq, event_id, type, envelope, created_at
           from jsonb_to_recordset(?::jsonb)
             as x(account_id text, seq bigint, event_id uuid, type text, envelope text, created_at timestamptz)
       )
       ${UPSERT_SEQS}`,
      [JSON.stringify(rows), seqs],
    );
  }
  // The rows just written may be among those a retraction of this batch rewrote: push the rewritten.
  const rewritten = await scrubRetracted(
    em,
    out.map((e, i) => ({ n: fresh[i]!, e })),
  );
  return out.map((e) => ({ ...e, envelope: rewritten.get(`${e.accountId}:${e.seq}`) ?? e.envelope }));
}

/**
 * The common batch of stage 2 in one statement (ADR 0059): `writeEnvelopes`'s rows and last seqs and
 * the stored offset's move together, outside a transaction, in one round trip where the transaction
 * takes five (BEGIN, the lookup, the rows, the offset, COMMIT). The statement moves the offset first
 * and writes only if it moved; skips the notifications stored already and the repeats within the
 * batch, as `writeEnvelopes` does; numbers the rest per account after its last seq, in batch order;
 * and makes each envelope's text from `ENVELOPE_HEAD`, the seq and `envelopeRest`, the bytes
 * `envelopeText` gives. The seqs it reads are those of the statement's snapshot, not locked: only
 * the member holding the partition writes its accounts, and one that lost it finds the offset moved
 * (then it writes nothing) or, at worst, a seq taken already, which the table's key refuses, failing
 * the whole statement. Undefined (the transaction then runs) for a batch the transaction must take:
 * one that carries or retracts a direct message's content (`scrubRetracted` reads and rewrites rows)
 * or is large enough for COPY.
 */
export async function writeEnvelopesAlone(
  em: EntityManager,
  batch: Notification[],
  move: OffsetMove,
): Promise<{ moved: boolean; result: CommittedEnvelope[] } | undefined> {
  if (batch.length >= COPY_FROM_ROWS || batch.some((n) => n.type === 'relay_message')) return undefined;
  const rows = batch.map((n, i) => ({
    i,
    account_id: n.accountId,
    event_id: n.eventId,
    type: n.type,
    rest: envelopeRest(n),
    created_at: n.createdAt,
  }));
  const [out] = await sql<{ moved: number; rows: { a: string; s: string; e: string }[] }>(
    em,
    `with ${MOVED_CTE},
     x as (
       select * from jsonb_to_recordset(?::jsonb)
         as x(i integer, account_id text, event_id uuid, type text, rest text, created_at timestamptz)
     ),
     fresh as (
       select distinct on (x.event_id) x.* from x
        where exists (select 1 from moved)
          and not exists (select 1 from read.oan_event e where e.event_id = x.event_id)
        order by x.event_id, x.i
     ),
     numbered as (
       select f.*, coalesce(s.last_seq, 0) + row_number() over (partition by f.account_id order by f.i) as seq
         from fresh f left join read.oan_account_seq s on s.account_id = f.account_id
     ),
     written as (
       insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
       select account_id, seq, event_id, type, ?::text || seq::text || '"' || rest, created_at from numbered
       returning account_id, seq, envelope
     ),
     seqs as (
       insert into read.oan_account_seq (account_id, last_seq)
       select account_id, max(seq) from numbered group by account_id
       on conflict (account_id) do update set last_seq = excluded.last_seq
     )
     select (select count(*) from moved)::int as moved,
            coalesce((select jsonb_agg(jsonb_build_object('a', w.account_id, 's', w.seq::text, 'e', w.envelope)
                                        order by n.i)
                        from written w join numbered n on n.account_id = w.account_id and n.seq = w.seq),
                     '[]'::jsonb) as rows`,
    [...movedParams(move), JSON.stringify(rows), ENVELOPE_HEAD],
  );
  return {
    moved: out!.moved > 0,
    result: out!.rows.map((r) => ({ accountId: r.a, seq: BigInt(r.s), envelope: r.e })),
  };
}
