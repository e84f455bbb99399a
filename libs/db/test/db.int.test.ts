import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { copyRows, dropDatabase, Migration, openDatabase, sql, type MikroORM } from '../src/index.ts';

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

describe('copyRows', () => {
  const table = 'db_test.copied';
  const columns = ['id', 'body', 'at'] as const;
  const read = (orm: MikroORM) =>
    sql<{ id: number; body: string | null; at: string | null }>(
      orm.em.fork(),
      `select id, body, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
         from ${table} order by id`,
    );

  it('stores every value byte for byte, backslashes, tabs, newlines and nulls included', async () => {
    const orm = opened[0]!;
    await sql(orm.em.fork(), `create table ${table} (id int primary key, body text, at timestamptz)`);
    const bodies = [
      '{"text":"a \\"quoted\\" word, a back\\\\slash"}',
      'tab\there, newline\nthere, return\rthere',
      '\\N is not null here',
      '\\.',
      'émoji 🙂, 中文',
      '',
    ];
    await orm.em
      .fork()
      .transactional((em) =>
        copyRows(em, table, columns, [
          ...bodies.map((b, i) => [String(i + 1), b, '2026-12-05T08:00:00.123Z']),
          ['99', null, null],
        ]),
      );
    expect(await read(orm)).toEqual([
      ...bodies.map((body, i) => ({ id: i + 1, body, at: '2026-12-05T08:00:00.123Z' })),
      { id: 99, body: null, at: null },
    ]);
  });

  // COPY's special characters and what follows a backslash in its escapes, among any grapheme.
  const copyUnit = fc.oneof(
    fc.constantFrom('\\', '\t', '\n', '\r', 'N', '.', '"', 'x'),
    // Postgres text holds no NUL (JSON text never has one raw).
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((g) => !g.includes('\0')),
  );

  it('round-trips any string', async () => {
    const orm = opened[0]!;
    let id = 1000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: copyUnit }), { minLength: 1, maxLength: 20 }),
        async (bodies) => {
          const first = id;
          id += bodies.length;
          await copyRows(
            orm.em.fork(),
            table,
            columns,
            bodies.map((b, i) => [String(first + i), b, null]),
          );
          const rows = await sql<{ body: string }>(
            orm.em.fork(),
            `select body from ${table} where id >= ? and id < ? order by id`,
            [first, id],
          );
          expect(rows.map((r) => r.body)).toEqual(bodies);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('a duplicate key fails the copy and rolls its transaction back; the connection serves on', async () => {
    const orm = opened[0]!;
    const before = await read(orm);
    await expect(
      orm.em.fork().transactional(async (em) => {
        await sql(em, `insert into ${table} (id, body) values (?, ?)`, [500, 'in the same transaction']);
        await copyRows(em, table, columns, [
          ['501', 'new', null],
          ['1', 'a key taken', null],
        ]);
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(copyRows(orm.em.fork(), table, columns, [['2', 'taken', null]])).rejects.toThrow(
      /duplicate key/,
    );
    expect(await read(orm)).toEqual(before);
    // Every connection of the pool (max 10 by default) still answers.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        orm.em.fork().transactional((em) => sql<{ v: number }>(em, 'select ?::int as v', [i])),
      ),
    );
    expect(answers.map((r) => r[0]!.v)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });
});
