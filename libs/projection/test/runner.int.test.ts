import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import {
  applyBatch,
  deadLetter,
  MOVED_CTE,
  movedParams,
  projectorMigration,
  storedOffsets,
  type OneStatementFn,
  type ProjectionRecord,
} from '../src/index.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'projector', migrations: [projectorMigration] });
  await sql(orm.em.fork(), 'create table projector.effects (offset_ bigint primary key)');
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const rec = (offset: number): ProjectionRecord => ({
  topic: 't',
  partition: 0,
  offset: String(offset),
  key: 'k',
  headers: {},
  value: Buffer.from('x'),
  timestamp: '0',
});
const effect = async (em: Parameters<Parameters<typeof applyBatch>[5]>[0], records: ProjectionRecord[]) => {
  for (const r of records) await sql(em, 'insert into projector.effects values (?)', [r.offset]);
  return records.length;
};

describe('applyBatch', () => {
  it('commits the effects and the next offset together', async () => {
    const out = await applyBatch(orm, 'c', 't', 0, [rec(0), rec(1), rec(2)], effect);
    expect(out).toMatchObject({ applied: 3, nextOffset: 3n, result: 3 });
    expect((await storedOffsets(orm.em.fork(), 'c')).get('t:0')).toBe(3n);
  });

  it('when a batch is redelivered after a crash, records below the stored offset change nothing', async () => {
    // The same records again (a primary-key violation would fail the test if they were re-applied).
    const out = await applyBatch(orm, 'c', 't', 0, [rec(1), rec(2), rec(3)], effect);
    expect(out).toMatchObject({ applied: 1, nextOffset: 4n });
    const rows = await sql<{ n: string }>(orm.em.fork(), 'select count(*)::text as n from projector.effects');
    expect(rows[0]!.n).toBe('4');
  });

  it('when the effect fails, neither the effects nor the offset move', async () => {
    const failing = applyBatch(orm, 'c', 't', 0, [rec(4), rec(5)], async (em, records) => {
      await effect(em, records);
      throw new Error('projection bug');
    });
    await expect(failing).rejects.toThrow('projection bug');
    expect((await storedOffsets(orm.em.fork(), 'c')).get('t:0')).toBe(4n);
    const rows = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from projector.effects where offset_ >= 4',
    );
    expect(rows[0]!.n).toBe('0');
  });

  it('when another member advanced the offset meanwhile (a rebalance), the batch runs again from the stored row', async () => {
    await applyBatch(orm, 'm', 't', 0, [rec(0), rec(1)], async (_em, records) => records.length);
    // Another member applied 2..5 and committed offset 6; this process still assumes 2.
    await sql(orm.em.fork(), `update projector.offsets set next_offset = 6 where consumer = 'm'`);
    const seen: string[] = [];
    const out = await applyBatch(
      orm,
      'm',
      't',
      0,
      [rec(2), rec(3), rec(4), rec(5), rec(6), rec(7)],
      async (em, records) => {
        seen.push(records.map((r) => r.offset).join(','));
        return records.length;
      },
    );
    // The first try (assuming 2) rolled back when its offset update found 6; the second read the row.
    expect(seen).toEqual(['2,3,4,5,6,7', '6,7']);
    expect(out).toMatchObject({ applied: 2, nextOffset: 8n });
    expect((await storedOffsets(orm.em.fork(), 'm')).get('t:0')).toBe(8n);
  });

  it('when the table is behind the batch (a lost tail of unflushed commits), applies nothing and says where to fetch from', async () => {
    // 'm' stored 8 above; the server "lost" the last commits: the row says 6 again.
    await sql(orm.em.fork(), `update projector.offsets set next_offset = 6 where consumer = 'm'`);
    const seen: string[] = [];
    const apply = async (_em: unknown, records: ProjectionRecord[]) => {
      seen.push(records.map((r) => r.offset).join(','));
      return records.length;
    };
    const gap = await applyBatch(orm, 'm', 't', 0, [rec(8), rec(9)], apply);
    expect(gap).toMatchObject({ applied: 0, gapFrom: 6n });
    // The try that assumed 8 rolled back when the offset update found 6; nothing was applied since.
    expect(seen).toEqual(['8,9']);
    seen.length = 0;
    // Fetched again from 6: applied from there.
    const out = await applyBatch(orm, 'm', 't', 0, [rec(6), rec(7), rec(8), rec(9)], apply);
    expect(out).toMatchObject({ applied: 4, nextOffset: 10n });
    // Records that are gone from the log for good: the caller accepts the gap.
    await sql(orm.em.fork(), `update projector.offsets set next_offset = 3 where consumer = 'm'`);
    const accepted = await applyBatch(orm, 'm', 't', 0, [rec(10)], apply, { acceptGap: true });
    expect(accepted).toMatchObject({ applied: 1, nextOffset: 11n });
    // (the first '10' assumed 10 and rolled back when the update found 3)
    expect(seen).toEqual(['6,7,8,9', '10', '10']);
  });

  it('with oneStatement, a batch that starts where this process left the partition goes as one statement', async () => {
    const ways: string[] = [];
    const inTransaction = async (em: Parameters<typeof effect>[0], records: ProjectionRecord[]) => {
      ways.push(`transaction ${records.map((r) => r.offset).join(',')}`);
      return effect(em, records);
    };
    let decline = false;
    const alone: OneStatementFn<number> = async (em, records, move) => {
      if (decline) return undefined;
      ways.push(`statement ${records.map((r) => r.offset).join(',')}`);
      const [row] = await sql<{ moved: number }>(
        em,
        `with ${MOVED_CTE},
         w as (insert into projector.effects select value::bigint from jsonb_array_elements_text(?::jsonb)
                where exists (select 1 from moved))
         select (select count(*) from moved)::int as moved`,
        [...movedParams(move), JSON.stringify(records.map((r) => r.offset))],
      );
      return { moved: row!.moved > 0, result: records.length };
    };
    const run = (offsets: number[]) =>
      applyBatch(
        orm,
        'one',
        't',
        0,
        offsets.map((o) => rec(100 + o)),
        inTransaction,
        { oneStatement: alone },
      );
    await sql(orm.em.fork(), `insert into projector.offsets values ('one', 't', 0, 100)`);
    // Unknown to this process yet: the transaction reads the row.
    expect(await run([0, 1])).toMatchObject({ applied: 2, nextOffset: 102n });
    // Where it left the partition, a redelivered record among them: one statement, from 102.
    expect(await run([1, 2, 3])).toMatchObject({ applied: 2, nextOffset: 104n, result: 2 });
    // Another member moved the offset to 106: the statement writes nothing, the transaction reads the row.
    await sql(orm.em.fork(), `update projector.offsets set next_offset = 106 where consumer = 'one'`);
    expect(await run([4, 5, 6, 7])).toMatchObject({ applied: 2, nextOffset: 108n, refused: 1 });
    // Declined by the function: the transaction.
    decline = true;
    expect(await run([8])).toMatchObject({ applied: 1, nextOffset: 109n });
    expect(ways).toEqual([
      'transaction 100,101',
      'statement 102,103',
      'statement 104,105,106,107',
      'transaction 106,107',
      'transaction 108',
    ]);
    const rows = await sql<{ o: string }>(
      orm.em.fork(),
      'select offset_::text as o from projector.effects where offset_ >= 100 order by offset_',
    );
    expect(rows.map((r) => r.o)).toEqual(['100', '101', '102', '103', '106', '107', '108']);
    expect((await storedOffsets(orm.em.fork(), 'one')).get('t:0')).toBe(109n);
  });

  it('records an undecodable record once in the dead-letter table', async () => {
    await orm.em.fork().transactional(async (em) => {
      await deadLetter(em, 'c', rec(9), 'bad avro');
      await deadLetter(em, 'c', rec(9), 'bad avro');
    });
    const rows = await sql<{ reason: string }>(orm.em.fork(), 'select reason from projector.dead_letters');
    expect(rows).toEqual([{ reason: 'bad avro' }]);
  });
});
