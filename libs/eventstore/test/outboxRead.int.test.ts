import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { ensureInfra } from '@oan/testing';
import { EventStore, outboxBatchQuery } from '../src/index.ts';

const id = randomBytes(4).toString('hex');
const url = `postgres://postgres@127.0.0.1:5432/oan_t_${id}`;
const schema = 'outbox_read';
const store = new EventStore(schema);
let orm: MikroORM;

/** Appends `n` events straight to the store, each with its outbox row, as the append statement does. */
async function appendMany(n: number, streams: string): Promise<void> {
  await sql(
    orm.em.fork(),
    `with ins as (
       insert into "${schema}".events (event_id, stream_id, stream_version, type, version, account_id, data, occurred_at)
       select gen_random_uuid(), ? || g, 1, 'T', 1, 'a-' || (g % 50), jsonb_build_object('i', g), now()
         from generate_series(1, ?) g
       returning position)
     insert into "${schema}".outbox (position) select position from ins`,
    [streams, n],
  );
}

/** What the publisher's read returns and the pages it touched (EXPLAIN ANALYZE, BUFFERS). */
async function publisherRead(limit: number): Promise<{ positions: number[]; pages: number }> {
  // Nothing published before it to delete ('{}'; sql() would expand a JS array into a list).
  const query = outboxBatchQuery(schema).replace('$1', '?').replaceAll('$2', `'{}'`);
  const rows = await sql<{ position: string }>(orm.em.fork(), query, [limit]);
  const [plan] = await sql<{
    'QUERY PLAN': [{ Plan: Record<string, number>; Planning?: Record<string, number> }];
  }>(orm.em.fork(), `explain (analyze, buffers, format json) ${query}`, [limit]);
  const top = plan!['QUERY PLAN'][0];
  const pages =
    (top.Plan['Shared Hit Blocks'] ?? 0) +
    (top.Plan['Shared Read Blocks'] ?? 0) +
    (top.Planning?.['Shared Hit Blocks'] ?? 0) +
    (top.Planning?.['Shared Read Blocks'] ?? 0);
  return { positions: rows.map((r) => Number(r.position)), pages };
}

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url, schema, migrations: [store.migration()] });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

describe("the outbox publisher's read", () => {
  it('costs what it returns, not what the store has published before it', async () => {
    // 100,000 events, analyzed while they all waited (the statistics of a busy outbox lag behind
    // it: in the throughput bench the planner counted 2,260 rows waiting where there were 0 to 48),
    // then published (their outbox rows deleted, as the publisher does), and 60 more waiting.
    await appendMany(100_000, 'old-');
    await sql(orm.em.fork(), `analyze "${schema}".events`);
    await sql(orm.em.fork(), `analyze "${schema}".outbox`);
    await sql(orm.em.fork(), `delete from "${schema}".outbox`);
    await appendMany(60, 'new-');
    // A first read steps over the deleted rows' index entries and marks them dead for the next.
    await publisherRead(50);

    const first = await publisherRead(50);
    // The oldest waiting first, in position order, and no more than the batch.
    expect(first.positions).toEqual(Array.from({ length: 50 }, (_, i) => 100_001 + i));
    // The 50 rows' pages, the index descents to them and the dead outbox entries stepped over: 378
    // when written. A read that walks the store's key from its start touches the pages of its
    // 100,000 entries: the join the publisher had before ADR 0054 touched 2,266.
    expect(first.pages).toBeLessThan(600);

    const rest = await publisherRead(50);
    expect(rest.positions).toEqual(first.positions);
    await sql(orm.em.fork(), `delete from "${schema}".outbox where position <= 100050`);
    expect((await publisherRead(50)).positions).toEqual(Array.from({ length: 10 }, (_, i) => 100_051 + i));
  });
});
