import { sql, type EntityManager } from '@oan/db';
import { fetchEventsWithIds, oanEventSql, type OanEventWithId } from '@oan/projection';
import { KEPT_DELIVERIES, type WebhookRow } from '../infra/webhookStore.ts';
import type { Attempt } from '@oan/webhooks';

/** The next envelope of the account after an endpoint's cursor, as stored (the bytes sent). */
export type QueuedEnvelope = OanEventWithId;

/** An endpoint whose account is not banned: a ban stops every delivery at once. */
const notBanned = (w: string) =>
  `not exists (select 1 from auth.accounts a where a.id = ${w}.account_id and a.banned_at is not null)`;

/** Endpoints (of accounts not banned) with an envelope after their cursor whose retry time (if any) has come. */
export async function dueWebhooks(em: EntityManager, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select w.id from auth.webhooks w
     where w.disabled_at is null and ${notBanned('w')} and (w.next_attempt_at is null or w.next_attempt_at <= now())
       and ${oanEventSql.hasEnvelopeAfter('w.account_id', 'w.last_seq')}
     order by w.next_attempt_at nulls first limit ?`,
    [limit],
  );
  return rows.map((r) => r.id);
}

/** The accounts with an enabled endpoint: the only ones whose new envelopes are worth a sweep. */
export async function webhookAccounts(em: EntityManager): Promise<string[]> {
  const rows = await sql<{ account_id: string }>(
    em,
    'select distinct account_id from auth.webhooks where disabled_at is null',
    [],
  );
  return rows.map((r) => r.account_id);
}

/** The endpoint, or null when it is gone or its account is banned (so the worker stops there). */
export async function webhookById(em: EntityManager, id: string): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow>(
    em,
    `select id, account_id, url, description, secret, created_at, last_seq::text as last_seq, attempt,
       failing_since, next_attempt_at, disabled_at
     from auth.webhooks w where id = ? and ${notBanned('w')}`,
    [id],
  );
  return row ?? null;
}

/** The next envelopes of the account after an endpoint's cursor, in seq order (numeric, not text). */
export function nextEnvelopes(em: EntityManager, accountId: string, afterSeq: string, limit: number) {
  return fetchEventsWithIds(em, accountId, afterSeq, limit);
}

/**
 * Records an attempt and moves the endpoint on, in one statement (so one commit): after a 2xx the
 * cursor passes the envelope in the same commit that records it, so an acknowledged envelope is never
 * sent again; after a failure the attempt count and the retry time. Fenced by the cursor read before
 * sending, so an endpoint deleted (or moved on by another process) meanwhile is left alone: false.
 */
export async function recordAttempt(
  em: EntityManager,
  w: WebhookRow,
  ev: QueuedEnvelope,
  attempt: Attempt,
  at: Date,
  failure: { failingSince: Date; retryAt: Date | null } | null,
): Promise<boolean> {
  const move = failure
    ? 'attempt = attempt + 1, failing_since = ?::timestamptz, next_attempt_at = ?::timestamptz'
    : 'last_seq = ?::bigint, attempt = 0, failing_since = null, next_attempt_at = null';
  const [row] = await sql<{ n: number }>(
    em,
    `with moved as (
       update auth.webhooks set ${move} where id = ? and last_seq = ? returning id
     ), recorded as (
       insert into auth.webhook_deliveries
         (webhook_id, event_id, seq, attempt, status_code, error, latency_ms, attempted_at, next_retry_at)
       select id, ?, ?, ?, ?, ?, ?, ?, ? from moved returning id
     )
     select count(*)::int as n from recorded`,
    [
      ...(failure ? [failure.failingSince, failure.retryAt] : [ev.seq]),
      w.id,
      w.last_seq,
      ev.eventId,
      ev.seq,
      w.attempt + 1,
      attempt.statusCode,
      attempt.error,
      attempt.latencyMs,
      at,
      failure?.retryAt ?? null,
    ],
  );
  const recorded = (row?.n ?? 0) > 0;
  // Keep the last KEPT_DELIVERIES attempts: a separate, idempotent clean-up, not every time.
  if (recorded && (failure || BigInt(ev.seq) % 20n === 0n)) {
    await sql(
      em,
      `delete from auth.webhook_deliveries where webhook_id = ? and id < (
         select id from auth.webhook_deliveries where webhook_id = ? order by id desc offset ? limit 1)`,
      [w.id, w.id, KEPT_DELIVERIES - 1],
    );
  }
  return recorded;
}
