import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeStatements, sql } from '@oan/db';
import {
  insertAccount,
  jwtFor,
  openFleet,
  startGateway,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';

/**
 * Paging at scale: GET /events is a keyset query on (account_id, seq). With many
 * accounts in the table and a long history, a 200-envelope page is one statement on read.oan_event,
 * planned as an ordered range scan of the primary key that stops after the page: no sort, no other
 * account's row, nothing past the page read. (For a short tail the planner may fetch the tail by a
 * bitmap scan of the same key and sort it; that reads no more rows than the tail.)
 */
interface Statement {
  sql: string;
  bindings: unknown[];
}

let fleet: Fleet;
/** The statement the page was served with, as the pool sent it. */
let pageStatement: Statement | undefined;
let gw: RunningGateway;
let account: string;
/** Ours has a long history; 399 others have 200 events each (99,800 rows in all). */
const OURS = 20_000;
const OTHERS = 399;
const PER_OTHER = 200;

/** Every statement sent while `during` runs (the gateway's and this test's, which sends none meanwhile). */
async function statementsDuring(during: () => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  const stop = observeStatements((q) => seen.push(q));
  try {
    await during();
  } finally {
    stop();
  }
  return seen;
}

beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet);
  account = await insertAccount(fleet.orm);
  // Rows as the projector writes them (the envelope text is not what this test is about).
  const insert = `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
    select ?, s, gen_random_uuid(), 'gofer_message', '{"seq":"' || s || '"}', now() from generate_series(1, ?) s`;
  await sql(fleet.orm.em.fork(), insert, [account, OURS]);
  for (let a = 0; a < OTHERS; a += 1) await sql(fleet.orm.em.fork(), insert, [`acc-bulk-${a}`, PER_OTHER]);
  await sql(fleet.orm.em.fork(), 'analyze read.oan_event');
});

afterAll(async () => {
  await gw?.close();
  await fleet?.close();
});

describe('a 200-envelope page of GET /events in a 20,000-event history among 400 accounts', () => {
  it('is one statement on read.oan_event', async () => {
    let res: Awaited<ReturnType<typeof gw.app.inject>> | undefined;
    const statements = await statementsDuring(async () => {
      res = await gw.app.inject({
        method: 'GET',
        url: '/api/v1/events?since=20&limit=200',
        headers: { authorization: `Bearer ${await jwtFor(account)}` },
      });
    });
    expect(res!.statusCode).toBe(200);
    const page = res!.json<{ seq: string }[]>();
    expect(page.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => String(21 + i)));
    const onTable = statements.filter((s) => s.sql.includes('read.oan_event'));
    expect(onTable).toHaveLength(1);
    pageStatement = onTable[0];
  });

  it('is planned as a range scan of the (account_id, seq) key: no sort, no other account read', async () => {
    const { sql: text, bindings } = pageStatement!;
    const [row] = await sql<{ 'QUERY PLAN': unknown }>(
      fleet.orm.em.fork(),
      `explain (analyze, format json) ${text}`,
      bindings,
    );
    const plan = JSON.stringify(row!['QUERY PLAN']);
    expect(plan).toContain('"Index Name":"oan_event_pkey"');
    expect(plan).not.toContain('"Node Type":"Sort"');
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
    const root = (
      row!['QUERY PLAN'] as { Plan: { Plans: { 'Actual Rows': number; 'Node Type': string }[] } }[]
    )[0]!.Plan;
    // The limit's input read exactly the page: not one row of another account or beyond it.
    expect(root.Plans[0]!['Actual Rows']).toBe(200);
    expect(root.Plans[0]!['Node Type']).toBe('Index Scan');
  });
});
