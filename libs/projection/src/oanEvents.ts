import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';

/**
 * The per-account OAN event table (one dense seq per account): written only by the projector, read by the
 * gateways. `envelope` holds the exact JSON text served by GET /events and pushed on the socket.
 */
class CreateOanEventTable extends Migration {
  override async up(): Promise<void> {
    this.addSql('create schema if not exists read');
    this.addSql(`create table if not exists read.oan_event (
      account_id text not null,
      seq bigint not null,
      event_id uuid not null unique,
      type text not null,
      envelope text not null,
      created_at timestamptz not null,
      primary key (account_id, seq))`);
    this.addSql(`create table if not exists read.oan_account_seq (
      account_id text primary key,
      last_seq bigint not null)`);
  }
}

export const oanEventMigration: MigrationDef = { name: 'read-0001-oan-event', class: CreateOanEventTable };

/**
 * Which `relay_message` rows of an account carry a direct message's content (its own and its
 * corrections'), so a retraction scrubs them without reading the account's events (stage 2 of the
 * projector, ADR 0037). Rebuilt by a replay like every table of schema `read`.
 */
class CreateRelayMessageSeqs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.relay_message_seqs (
      account_id text not null,
      message_id text not null,
      seq bigint not null,
      primary key (account_id, message_id, seq))`);
  }
}

export const relayMessageSeqsMigration: MigrationDef = {
  name: 'read-0015-relay-message-seqs',
  class: CreateRelayMessageSeqs,
};

export interface OanEventRow {
  seq: string;
  envelope: string;
}

/** Keyset page (account_id, seq) > since, ascending: one index range scan. */
export async function fetchEvents(
  em: EntityManager,
  accountId: string,
  sinceExclusive: bigint,
  limit: number,
): Promise<OanEventRow[]> {
  const rows = await sql<{ seq: string; envelope: string }>(
    em,
    'select seq::text as seq, envelope from read.oan_event where account_id = ? and seq > ? order by oan_event.seq limit ?',
    [accountId, sinceExclusive.toString(), limit],
  );
  return rows;
}

/** Highest visible seq for the account, 0n when it has none (GET /events/cursor). */
export async function maxSeq(em: EntityManager, accountId: string): Promise<bigint> {
  const [row] = await sql<{ m: string | null }>(
    em,
    'select max(seq)::text as m from read.oan_event where account_id = ?',
    [accountId],
  );
  return BigInt(row?.m ?? '0');
}

/** Rows in (after, upTo], ascending: what a gateway sends to close a gap. */
export async function fetchRange(
  em: EntityManager,
  accountId: string,
  afterExclusive: bigint,
  upToInclusive: bigint,
): Promise<OanEventRow[]> {
  return sql<{ seq: string; envelope: string }>(
    em,
    'select seq::text as seq, envelope from read.oan_event where account_id = ? and seq > ? and seq <= ? order by oan_event.seq',
    [accountId, afterExclusive.toString(), upToInclusive.toString()],
  );
}

/** One stored envelope with its event id (a webhook delivery's `webhook-id`). */
export interface OanEventWithId extends OanEventRow {
  eventId: string;
}

/** Like `fetchEvents`, with each envelope's event id. */
export function fetchEventsWithIds(
  em: EntityManager,
  accountId: string,
  sinceExclusive: bigint | string,
  limit: number,
): Promise<OanEventWithId[]> {
  return sql<OanEventWithId>(
    em,
    `select seq::text as seq, event_id::text as "eventId", envelope from read.oan_event
      where account_id = ? and seq > ? order by oan_event.seq limit ?`,
    [accountId, sinceExclusive.toString(), limit],
  );
}

/** One stored envelope of the account by its event id (a runtime's job hands it out), or null. */
export async function envelopeOf(
  em: EntityManager,
  accountId: string,
  eventId: string,
): Promise<string | null> {
  const [row] = await sql<{ envelope: string }>(
    em,
    'select envelope from read.oan_event where account_id = ? and event_id = ?',
    [accountId, eventId],
  );
  return row?.envelope ?? null;
}

/** The highest stored seq of each of `accountIds`; accounts without any envelope are absent. */
export async function lastSeqs(em: EntityManager, accountIds: string[]): Promise<Map<string, bigint>> {
  if (accountIds.length === 0) return new Map();
  const rows = await sql<{ account_id: string; m: string }>(
    em,
    'select account_id, max(seq)::text as m from read.oan_event where account_id in (?) group by account_id',
    [accountIds],
  );
  return new Map(rows.map((r) => [r.account_id, BigInt(r.m)]));
}

/**
 * SQL conditions on the event table for another owner's query to embed (their text stays here, with
 * the table): whether the account in column `accountColumn` has an envelope after seq column
 * `seqColumn`, and that account's last seq (0 without envelopes).
 */
export const oanEventSql = {
  hasEnvelopeAfter: (accountColumn: string, seqColumn: string) =>
    `exists (select 1 from read.oan_event e where e.account_id = ${accountColumn} and e.seq > ${seqColumn})`,
  lastSeqOf: (accountExpression: string) =>
    `coalesce((select last_seq from read.oan_account_seq where account_id = ${accountExpression}), 0)`,
};
