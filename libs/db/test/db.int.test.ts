import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, Migration, openDatabase, sql, type MikroORM } from '../src/index.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
const opened: MikroORM[] = [];
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close(true)));
  await dropDatabase(url);
});

class CreateThings extends Migration {
  override async up(): Promise<void> {
    // Not idempotent on purpose: running it twice would fail.
    this.addSql('create table db_test.things (id int primary key)');
    this.addSql('insert into db_test.things values (1)');
  }
}
const migrations = [{ name: 'db-test-0001', class: CreateThings }];

describe('openDatabase', () => {
  it('when five processes open a missing database at once, it is created once and migrated once', async () => {
    const orms = await Promise.all(
      Array.from({ length: 5 }, () => openDatabase({ url, schema: 'db_test', migrations })),
    );
    opened.push(...orms);
    for (const orm of orms) {
      const rows = await sql<{ id: number }>(orm.em.fork(), 'select id from db_test.things');
      expect(rows).toEqual([{ id: 1 }]);
    }
  });

  it('binds `?` parameters and runs transactions that roll back on error', async () => {
    const orm = opened[0]!;
    await expect(
      orm.em.fork().transactional(async (em) => {
        await sql(em, 'insert into db_test.things values (?)', [2]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const rows = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from db_test.things where id = ?',
      [2],
    );
    expect(rows[0]!.n).toBe('0');
  });

  it('binds `?` outside quotes and comments, expands array parameters into lists, and reuses the prepared plan', async () => {
    const orm = opened[0]!;
    const [row] = await sql<{ q: string; c: string; n: string; empty: boolean }>(
      orm.em.fork(),
      `select 'what?' as q, ? || '?' as c, -- a comment? it holds no parameter
              (select count(*)::text from db_test.things where id in (?)) as n,
              (1 in (?)) is null as empty`,
      ['x', [1, 2, 3], []],
    );
    expect(row).toEqual({ q: 'what?', c: 'x?', n: expect.any(String), empty: true });
    // One connection (a transaction's): the statement is prepared once and then only executed.
    const prepared = await orm.em.fork().transactional(async (em) => {
      for (let i = 0; i < 3; i++) {
        const [r] = await sql<{ v: number }>(em, 'select ?::int + 1 as v', [i]);
        expect(r!.v).toBe(i + 1);
      }
      return sql<{ statement: string }>(
        em,
        `select statement from pg_prepared_statements where statement like 'select $1::int + 1%'`,
      );
    });
    expect(prepared.map((p) => p.statement)).toEqual(['select $1::int + 1 as v']);
    await expect(sql(orm.em.fork(), 'select ? as a', [])).rejects.toThrow('1 placeholders but 0 parameters');
  });
});
