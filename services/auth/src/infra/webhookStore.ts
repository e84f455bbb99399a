import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import { oanEventSql } from '@oan/projection';

/**
 * ADR 0018: webhook endpoints and their delivery state. Not event-sourced: an endpoint's
 * signing secret must never reach the log (infinite retention), and its cursor and attempts are
 * working state of the delivery loop, re-derivable from `read.oan_event`. Only the disablement is a
 * domain event (`WebhookDisabled`), whose inline projection sets `disabled_at`.
 */
class CreateWebhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists auth.webhooks (
      id uuid primary key,
      account_id text not null,
      url text not null,
      description text,
      secret text not null,
      created_at timestamptz not null,
      last_seq bigint not null,
      attempt int not null default 0,
      failing_since timestamptz,
      next_attempt_at timestamptz,
      disabled_at timestamptz)`);
    this.addSql('create index if not exists webhooks_account_id_idx on auth.webhooks (account_id)');
    this.addSql(`create table if not exists auth.webhook_deliveries (
      id bigserial primary key,
      webhook_id uuid not null references auth.webhooks (id) on delete cascade,
      event_id uuid not null,
      seq bigint not null,
      attempt int not null,
      status_code int,
      error text,
      latency_ms int not null,
      attempted_at timestamptz not null,
      next_retry_at timestamptz)`);
    this.addSql(
      'create index if not exists webhook_deliveries_webhook_idx on auth.webhook_deliveries (webhook_id, id desc)',
    );
  }
}

export const webhooksMigration: MigrationDef = { name: 'auth-0002-webhooks', class: CreateWebhooks };

/** How many attempts per endpoint `GET /webhooks/:id/deliveries` keeps and shows. */
export const KEPT_DELIVERIES = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  secret: string;
  created_at: Date;
  last_seq: string;
  attempt: number;
  failing_since: Date | null;
  next_attempt_at: Date | null;
  disabled_at: Date | null;
}

export interface DeliveryRow {
  event_id: string;
  seq: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  attempted_at: Date;
  next_retry_at: Date | null;
}

/**
 * Inserts an endpoint unless the account has `max` already (the account row is locked, so two
 * registrations cannot both pass the count). Its cursor starts at the account's last envelope: it
 * receives every envelope after its registration. Null when the limit is reached.
 */
export async function insertWebhook(
  em: EntityManager,
  w: { id: string; accountId: string; url: string; description: string | null; secret: string; now: Date },
  max: number,
): Promise<WebhookRow | null> {
  await sql(em, 'select 1 from auth.accounts where id = ? for update', [w.accountId]);
  const [count] = await sql<{ n: number }>(
    em,
    'select count(*)::int as n from auth.webhooks where account_id = ?',
    [w.accountId],
  );
  if ((count?.n ?? 0) >= max) return null;
  const [row] = await sql<WebhookRow>(
    em,
    `insert into auth.webhooks (id, account_id, url, description, secret, created_at, last_seq)
     values (?, ?, ?, ?, ?, ?, ${oanEventSql.lastSeqOf('?')})
     returning *`,
    [w.id, w.accountId, w.url, w.description, w.secret, w.now, w.accountId],
  );
  return row!;
}

export const listWebhooks = (em: EntityManager, accountId: string) =>
  sql<WebhookRow>(em, 'select * from auth.webhooks where account_id = ? order by created_at, id', [
    accountId,
  ]);

/** The account's endpoint, or null for an unknown, foreign or malformed id (one answer: 403). */
export async function ownWebhook(
  em: EntityManager,
  accountId: string,
  id: string,
): Promise<WebhookRow | null> {
  if (!UUID.test(id)) return null;
  const [row] = await sql<WebhookRow>(em, 'select * from auth.webhooks where id = ? and account_id = ?', [
    id,
    accountId,
  ]);
  return row ?? null;
}

export async function deleteWebhook(em: EntityManager, accountId: string, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  const rows = await sql(em, 'delete from auth.webhooks where id = ? and account_id = ? returning id', [
    id,
    accountId,
  ]);
  return rows.length > 0;
}

export const recentDeliveries = (em: EntityManager, webhookId: string, limit: number) =>
  sql<DeliveryRow>(
    em,
    `select event_id, seq::text as seq, attempt, status_code, error, latency_ms, attempted_at, next_retry_at
     from auth.webhook_deliveries where webhook_id = ? order by id desc limit ?`,
    [webhookId, limit],
  );
