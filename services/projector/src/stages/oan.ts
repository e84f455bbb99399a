import { sql, type EntityManager } from '@oan/db';
import { envelopeText, type Notification } from '../notifications';

export interface CommittedEnvelope {
  accountId: string;
  seq: bigint;
  envelope: string;
}

/**
 * Stage 2 (invariant 2): gives each notification of one `oan.events` partition batch its dense
 * per-account seq, in partition order, and writes the rows. A notification whose eventId is already
 * stored (an at-least-once redelivery from stage 1) is skipped before a seq is taken, so replaying
 * the topic from zero reproduces the same seqs. Runs inside the batch's transaction.
 */
export async function writeEnvelopes(em: EntityManager, batch: Notification[]): Promise<CommittedEnvelope[]> {
  if (batch.length === 0) return [];
  const known = await sql<{ event_id: string }>(
    em,
    `select event_id::text as event_id from read.oan_event
      where event_id in (select value::uuid from jsonb_array_elements_text(?::jsonb))`,
    [JSON.stringify(batch.map((n) => n.eventId))],
  );
  const seen = new Set(known.map((r) => r.event_id));
  const fresh: Notification[] = [];
  for (const n of batch) {
    if (seen.has(n.eventId)) continue;
    seen.add(n.eventId);
    fresh.push(n);
  }
  if (fresh.length === 0) return [];

  const accounts = [...new Set(fresh.map((n) => n.accountId))];
  const current = await sql<{ account_id: string; last_seq: string }>(
    em,
    `select account_id, last_seq::text as last_seq from read.oan_account_seq
      where account_id in (select value from jsonb_array_elements_text(?::jsonb)) for update`,
    [JSON.stringify(accounts)],
  );
  const last = new Map(current.map((r) => [r.account_id, BigInt(r.last_seq)]));

  const out: CommittedEnvelope[] = [];
  for (const n of fresh) {
    const seq = (last.get(n.accountId) ?? 0n) + 1n;
    last.set(n.accountId, seq);
    out.push({ accountId: n.accountId, seq, envelope: envelopeText(n, seq) });
  }
  // knex expands array bindings into lists, so rows travel as one JSON document.
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
    `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
     select account_id, seq, event_id, type, envelope, created_at
       from jsonb_to_recordset(?::jsonb)
         as x(account_id text, seq bigint, event_id uuid, type text, envelope text, created_at timestamptz)`,
    [JSON.stringify(rows)],
  );
  await sql(
    em,
    `insert into read.oan_account_seq (account_id, last_seq)
     select account_id, last_seq from jsonb_to_recordset(?::jsonb) as x(account_id text, last_seq bigint)
     on conflict (account_id) do update set last_seq = excluded.last_seq`,
    [JSON.stringify([...last].map(([account_id, s]) => ({ account_id, last_seq: s.toString() })))],
  );
  return out;
}
