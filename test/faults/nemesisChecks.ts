import { waitFor } from '@oan/testing';
import type { WebhookReceiver } from '../webhookReceiver.ts';
import { query } from './verify.ts';

/** Discovery proposed no pair of Gofers twice (a thread per pair, ever). */
export async function duplicateProposals(databaseUrl: string): Promise<string[]> {
  const rows = await query<{ pair: string; n: string }>(
    databaseUrl,
    `select data->'a'->>'goferId' || ' + ' || (data->'b'->>'goferId') as pair, count(*)::text as n
       from matching.events where type = 'ThreadProposed' group by 1 having count(*) > 1`,
  );
  return rows.map((r) => `Gofers ${r.pair} proposed ${r.n}×`);
}

/** Every account that joined was registered once. */
export async function duplicateAccounts(databaseUrl: string): Promise<string[]> {
  const rows = await query<{ stream_id: string; n: string }>(
    databaseUrl,
    `select stream_id, count(*)::text as n from auth.events where type = 'AccountRegistered'
      group by 1 having count(*) > 1`,
  );
  return rows.map((r) => `account ${r.stream_id} registered ${r.n}×`);
}

/**
 * The webhook got every envelope of the account after its start, in seq order, each acknowledged
 * under its own `webhook-id`; a request seen twice is the same `webhook-id` with the same body (a
 * retry), never the same envelope under another id or another body under one id (waits for the
 * deliveries to catch up, bounded).
 */
export async function webhookViolations(
  databaseUrl: string,
  receiver: WebhookReceiver,
  hook: { path: string; from: string; accountId: string },
): Promise<string[]> {
  const stored = async () =>
    query<{ event_id: string; envelope: string }>(
      databaseUrl,
      `select event_id, envelope from read.oan_event where account_id = $1 and seq > $2 order by seq`,
      [hook.accountId, hook.from],
    );
  let want: { event_id: string; envelope: string }[] = [];
  let got: string[] = [];
  const acked = () => receiver.at(hook.path).filter((r) => r.answered !== undefined && r.answered < 300);
  const firstAcks = () => [...new Set(acked().map((r) => String(r.headers['webhook-id'])))];
  await waitFor(
    async () => {
      // The acknowledgements first, then the table: an envelope is stored before it is delivered, so
      // every acknowledged one is in this read (the other order races an envelope stored between).
      got = firstAcks();
      want = await stored();
      return got.length >= want.length;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'every envelope at the webhook' },
  ).catch(() => undefined);
  const bad: string[] = [];
  if (want.length === 0)
    bad.push('no envelope of the account after the webhook started: nothing was checked');
  const bodies = new Map<string, Set<string>>();
  for (const r of receiver.at(hook.path)) {
    const id = String(r.headers['webhook-id']);
    bodies.set(id, (bodies.get(id) ?? new Set()).add(r.body));
  }
  for (const [id, set] of bodies) if (set.size > 1) bad.push(`webhook-id ${id} came with ${set.size} bodies`);
  const byEnvelope = new Map<string, string[]>();
  for (const [id, set] of bodies)
    for (const body of set) byEnvelope.set(body, [...(byEnvelope.get(body) ?? []), id]);
  for (const [, ids] of byEnvelope)
    if (ids.length > 1) bad.push(`one envelope under webhook-ids ${ids.join(', ')}`);
  const expected = want.map((w) => w.event_id);
  const first = expected.findIndex((id, i) => got[i] !== id);
  if (first >= 0 || got.length !== expected.length)
    bad.push(
      `acknowledged ${got.length} envelopes, stored ${expected.length}; ` +
        (first >= 0
          ? `#${first} acknowledged is ${got[first] ?? 'missing'}, stored is ${expected[first]}`
          : `then ${got.slice(expected.length).join(', ')}`),
    );
  for (const w of want) {
    const seen = bodies.get(w.event_id);
    if (seen && !seen.has(w.envelope))
      bad.push(`webhook-id ${w.event_id} carried a body other than the stored envelope`);
  }
  return bad;
}
