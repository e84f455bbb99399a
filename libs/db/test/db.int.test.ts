import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, Migration, openDatabase, sql, type MikroORM } from '../src';

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
});
