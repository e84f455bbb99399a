import { sql, type EntityManager } from '@oan/db';

/** A notification as the delivery loop claimed it. */
export interface ClaimedDelivery {
  id: string;
  task_id: string;
  caller_id: string;
  config_id: string;
  body: string;
  content_type: string;
  attempts: number;
  lease_id: string;
}

/** One notification of one event to one config, in the order `rows` are given. */
export interface QueuedRow {
  configId: string;
  body: string;
  contentType: string;
}

/** Queues the notifications of one event of a task, in one statement (so in one commit). */
export async function enqueue(
  em: EntityManager,
  taskId: string,
  callerId: string,
  rows: QueuedRow[],
  now: Date,
): Promise<void> {
  await sql(
    em,
    `insert into gofers.a2a_push_deliveries
       (task_id, caller_id, config_id, body, content_type, next_at, created_at)
     select ?, ?, r->>'configId', r->>'body', r->>'contentType', ?, ?
     from jsonb_array_elements(?::jsonb) with ordinality as t(r, n) order by n`,
    [taskId, callerId, now, now, JSON.stringify(rows)],
  );
}

/**
 * Takes up to `limit` due notifications for this process until `leaseUntil`. Only the head of each
 * queue (the oldest pending row of a task and config) can be taken, and only when no live lease holds
 * it, so a later event is never sent before an earlier one is delivered or given up. The rows are
 * locked `for update skip locked` and the update checks the lease again, so two processes never
 * take one row, and a process that died leaves rows that are taken again once its lease runs out.
 */
export async function claimDue(
  em: EntityManager,
  now: Date,
  leaseId: string,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedDelivery[]> {
  return sql<ClaimedDelivery>(
    em,
    `with heads as (
       select distinct on (task_id, caller_id, config_id) id, next_at, lease_until
       from gofers.a2a_push_deliveries where state = 'pending'
       order by task_id, caller_id, config_id, id
     ), due as (
       select id from heads where next_at <= ?::timestamptz
         and (lease_until is null or lease_until <= ?::timestamptz)
       order by next_at, id limit ?
     ), locked as (
       select d.id from gofers.a2a_push_deliveries d join due on due.id = d.id for update of d skip locked
     )
     update gofers.a2a_push_deliveries d set lease_id = ?::uuid, lease_until = ?::timestamptz
     from locked where d.id = locked.id and d.state = 'pending'
       and (d.lease_until is null or d.lease_until <= ?::timestamptz)
     returning d.id::text as id, d.task_id, d.caller_id, d.config_id, d.body, d.content_type, d.attempts,
       d.lease_id::text as lease_id`,
    [now, now, limit, leaseId, leaseUntil, now],
  );
}

export type Outcome =
  { kind: 'delivered' } | { kind: 'retry'; at: Date; error: string } | { kind: 'given-up'; error: string };

/** Records an attempt, fenced by the lease: a row taken again by another process meanwhile is left alone. */
export async function record(em: EntityManager, d: ClaimedDelivery, outcome: Outcome): Promise<boolean> {
  const set =
    outcome.kind === 'delivered'
      ? `state = 'delivered', last_error = null`
      : outcome.kind === 'retry'
        ? `next_at = ?::timestamptz, last_error = ?`
        : `state = 'failed', last_error = ?`;
  const params =
    outcome.kind === 'delivered'
      ? []
      : outcome.kind === 'retry'
        ? [outcome.at, outcome.error]
        : [outcome.error];
  const rows = await sql(
    em,
    `update gofers.a2a_push_deliveries set ${set}, attempts = attempts + 1, lease_id = null, lease_until = null
     where id = ?::bigint and lease_id = ?::uuid returning id`,
    [...params, d.id, d.lease_id],
  );
  return rows.length > 0;
}

/** Forgets delivered and given-up notifications older than `before` (a bounded batch). */
export async function forgetDone(em: EntityManager, before: Date): Promise<void> {
  await sql(
    em,
    `delete from gofers.a2a_push_deliveries where id in (
       select id from gofers.a2a_push_deliveries where state <> 'pending' and created_at < ?::timestamptz
       limit 1000)`,
    [before],
  );
}
