import { sql, type EntityManager } from '@oan/db';
import { serializeEnvelope, type OanEventEnvelope } from '@oan/protocol';
import { relayedMessageOf, scrubbedRelayPayload } from '@oan/readmodels';
import type { Notification } from '../notifications.ts';

/**
 * Retractions (ADR 0037), in stage 2's batch transaction after its rows are written: each
 * `relay_message` that carries a direct message's content (the message's own, a correction's) is
 * recorded by account, message and seq (`read.relay_message_seqs`); a retraction rewrites those
 * earlier rows of its recipient with the content taken out. Only `oan.events` decides it, in the
 * recipient's partition order (a message, its corrections and its retraction all go to the one
 * account), so a replay of the topic scrubs the same rows to the same bytes as the live run did.
 * Returns the rows rewritten, `account_id:seq` → envelope, for the caller's pushes.
 */
export async function scrubRetracted(
  em: EntityManager,
  written: readonly { n: Notification; e: { accountId: string; seq: bigint } }[],
): Promise<Map<string, string>> {
  const carried: { account_id: string; message_id: string; seq: string }[] = [];
  const retractions: { accountId: string; messageId: string; seq: bigint }[] = [];
  for (const { n, e } of written) {
    if (n.type !== 'relay_message') continue;
    const ref = relayedMessageOf(JSON.parse(n.payload) as Record<string, unknown>);
    if (!ref) continue;
    if (ref.retracts) retractions.push({ accountId: e.accountId, messageId: ref.messageId, seq: e.seq });
    else carried.push({ account_id: e.accountId, message_id: ref.messageId, seq: e.seq.toString() });
  }
  if (carried.length > 0) {
    await sql(
      em,
      `insert into read.relay_message_seqs (account_id, message_id, seq)
       select account_id, message_id, seq
         from jsonb_to_recordset(?::jsonb) as x(account_id text, message_id text, seq bigint)
       on conflict do nothing`,
      [JSON.stringify(carried)],
    );
  }
  const rewritten = new Map<string, string>();
  for (const r of retractions) {
    const rows = await sql<{ seq: string; envelope: string }>(
      em,
      `select e.seq::text as seq, e.envelope from read.relay_message_seqs s
         join read.oan_event e on e.account_id = s.account_id and e.seq = s.seq
        where s.account_id = ? and s.message_id = ? and s.seq < ?`,
      [r.accountId, r.messageId, r.seq.toString()],
    );
    const changed = rows
      .map((row) => ({ seq: row.seq, envelope: scrubbed(row.envelope) }))
      .filter((row, i) => row.envelope !== rows[i]!.envelope);
    if (changed.length === 0) continue;
    await sql(
      em,
      `update read.oan_event set envelope = x.envelope
         from jsonb_to_recordset(?::jsonb) as x(seq bigint, envelope text)
        where oan_event.account_id = ? and oan_event.seq = x.seq`,
      [JSON.stringify(changed), r.accountId],
    );
    for (const row of changed) rewritten.set(`${r.accountId}:${row.seq}`, row.envelope);
  }
  return rewritten;
}

/** The stored envelope text again, its payload scrubbed (the envelope's own serializer: the same bytes for the same row). */
function scrubbed(envelope: string): string {
  const e = JSON.parse(envelope) as OanEventEnvelope;
  return serializeEnvelope({ ...e, payload: scrubbedRelayPayload(e.payload) });
}
