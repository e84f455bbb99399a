import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { OanEventEnvelope } from '@oan/protocol';
import { waitFor } from '@oan/testing';
import { withClient } from '../support.ts';
import { allEvents } from './connector.ts';
import { ok, type LoadRun, type Party } from './load.ts';

/** One query on a connection of its own (the fleet's pools may be the thing under fault). */
export async function query<T extends pg.QueryResultRow>(
  databaseUrl: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return withClient(databaseUrl, async (client) => (await client.query<T>(sql, params)).rows);
}

/**
 * Nothing lost, nothing doubled, on the write side: every command answered 2xx has its event in its
 * service's store exactly once; one that failed during the fault has it at most once (it may have
 * committed before the connection broke). Returns the violations.
 */
export async function storeViolations(databaseUrl: string, run: LoadRun): Promise<string[]> {
  const rows = await query<{ content: string; n: string; ids: string[] }>(
    databaseUrl,
    `select data->>'content' as content, count(*)::text as n, array_agg(data->>'messageId') as ids
       from conversations.events where type = 'ConversationMessageSent' and data->>'content' like $1
      group by 1
     union all
     select data->>'content', count(*)::text, array_agg(data->>'messageId')
       from gofers.events where type = 'ChatMessageAdded' and data->>'role' = 'user' and data->>'content' like $1
      group by 1`,
    [`${run.label} %`],
  );
  const found = new Map(rows.map((r) => [r.content, r]));
  const bad: string[] = [];
  for (const s of run.sent) {
    const row = found.get(s.content);
    const n = Number(row?.n ?? 0);
    if (ok(s) && n !== 1)
      bad.push(`${s.kind} "${s.content}" answered ${s.outcome.status} but is stored ${n}×`);
    if (!ok(s) && n > 1)
      bad.push(`${s.kind} "${s.content}" answered ${s.outcome.status} and is stored ${n}×`);
    if (ok(s) && s.kind === 'message' && row && row.ids[0] !== s.outcome.body.id)
      bad.push(`message "${s.content}" answered id ${s.outcome.body.id} but was stored as ${row.ids[0]}`);
  }
  return bad;
}

/** A dense per-account seq in the table: seq runs 1..n with no gap and no event id twice. */
export async function seqViolations(databaseUrl: string, accountIds: string[]): Promise<string[]> {
  const rows = await query<{ account_id: string; n: string; max: string; ids: string }>(
    databaseUrl,
    `select account_id, count(*)::text as n, max(seq)::text as max, count(distinct event_id)::text as ids
       from read.oan_event where account_id = any($1) group by account_id`,
    [accountIds],
  );
  return rows
    .filter((r) => r.n !== r.max || r.ids !== r.n)
    .map((r) => `account ${r.account_id}: ${r.n} rows, max seq ${r.max}, ${r.ids} distinct event ids`);
}

/**
 * Every conversation message answered 2xx reached the recipient's event table as exactly one
 * relay_message (waits for the projector to catch up, bounded).
 */
export async function awaitRelays(databaseUrl: string, run: LoadRun): Promise<string[]> {
  const wanted = run.sent.filter((s) => s.kind === 'message' && ok(s)).map((s) => s.outcome.body.id!);
  const count = async () =>
    new Map(
      (
        await query<{ id: string; n: string }>(
          databaseUrl,
          `select envelope::jsonb->'payload'->>'messageId' as id, count(*)::text as n from read.oan_event
            where type = 'relay_message' and envelope::jsonb->'payload'->>'messageId' = any($1) group by 1`,
          [wanted],
        )
      ).map((r) => [r.id, Number(r.n)]),
    );
  let seen = new Map<string, number>();
  await waitFor(
    async () => {
      seen = await count();
      return wanted.every((id) => seen.has(id));
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${wanted.length} relay_message rows` },
  ).catch(() => undefined);
  return wanted
    .filter((id) => seen.get(id) !== 1)
    .map((id) => `message ${id} answered 2xx but has ${seen.get(id) ?? 0} relay_message rows`);
}

/**
 * Each envelope reaches every socket of its account once and in order, as a host sees it: each
 * connector delivered exactly what GET /events holds after its start, once each, in seq order with
 * no gap (waits for the sockets to catch up, bounded).
 */
export async function socketViolations(party: Party): Promise<string[]> {
  const bad: string[] = [];
  let truth: OanEventEnvelope[] = [];
  await waitFor(
    async () => {
      truth = await allEvents(party.connectors[0], party.startCursor);
      return party.connectors.every((c) => c.delivered.length >= truth.length);
    },
    { timeoutMs: 60_000, intervalMs: 500, what: `${party.name}'s sockets to catch up` },
  ).catch(() => undefined);
  for (const [i, c] of party.connectors.entries()) {
    await c.idle();
    const seqs = c.delivered.map((e) => Number(e.seq));
    const dense = seqs.every((s, k) => s === Number(party.startCursor) + k + 1);
    if (!dense) bad.push(`${party.name}/${i}: delivered seqs not dense from ${party.startCursor}`);
    if (new Set(c.delivered.map((e) => e.eventId)).size !== c.delivered.length)
      bad.push(`${party.name}/${i}: an eventId delivered twice`);
    const upTo = c.delivered.slice(0, truth.length);
    if (JSON.stringify(upTo) !== JSON.stringify(truth))
      bad.push(
        `${party.name}/${i}: delivered ${c.delivered.length} envelopes, GET /events holds ${truth.length}, and they differ`,
      );
  }
  return bad;
}

/**
 * Every Gofer chat message answered 2xx is projected into the chat history exactly once (waits for
 * the projector to catch up, bounded): the pipeline after the store resumed after the fault.
 */
export async function awaitChatRows(databaseUrl: string, run: LoadRun): Promise<string[]> {
  const wanted = run.sent.filter((s) => s.kind === 'chat' && ok(s)).map((s) => s.content);
  let seen = new Map<string, number>();
  await waitFor(
    async () => {
      const rows = await query<{ content: string; n: string }>(
        databaseUrl,
        `select content, count(*)::text as n from read.gofer_messages
          where role = 'user' and content = any($1) group by 1`,
        [wanted],
      );
      seen = new Map(rows.map((r) => [r.content, Number(r.n)]));
      return wanted.every((c) => seen.has(c));
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${wanted.length} chat rows` },
  ).catch(() => undefined);
  return wanted
    .filter((c) => seen.get(c) !== 1)
    .map((c) => `chat "${c}" answered 2xx but has ${seen.get(c) ?? 0} rows in read.gofer_messages`);
}

/**
 * Where a pipeline stalled, for a failure message: the outboxes' backlogs, the projector's offsets and
 * dead letters, and the last warnings and errors of the outbox and projector processes.
 */
export async function stallReport(databaseUrl: string, logDir: string): Promise<string[]> {
  const lines: string[] = [];
  const attempt = async (label: string, sql: string) => {
    try {
      const rows = await query<Record<string, unknown>>(databaseUrl, sql);
      lines.push(`${label}: ${JSON.stringify(rows)}`);
    } catch (err) {
      lines.push(`${label}: ${(err as Error).message}`);
    }
  };
  for (const schema of ['gofers', 'matching', 'conversations'])
    await attempt(`${schema}.outbox backlog`, `select count(*)::int as n from "${schema}".outbox`);
  await attempt('projector.offsets', 'select consumer, topic, partition, next_offset from projector.offsets');
  await attempt(
    'projector.dead_letters',
    'select consumer, topic, "offset", reason from projector.dead_letters order by id desc limit 5',
  );
  for (const file of readdirSync(logDir).filter((f) => /^(outbox|projector)\d*\.log$/.test(f))) {
    const noisy = /kafkajs (Connection|BrokerPool)\]/;
    const tail = readFileSync(join(logDir, file), 'utf8')
      .split('\n')
      .filter((l) => /"level":[456]0/.test(l) && !noisy.test(l))
      .slice(-15)
      .map((l) => `  ${l.slice(0, 400)}`);
    lines.push(`${file}, last warnings and errors:`, ...tail);
  }
  return lines;
}
