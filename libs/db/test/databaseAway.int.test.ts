// A process that starts while its Postgres server does not answer (down, restarting, its address not
// there yet) waits for it: `openDatabase` creates the database and migrates it once the server answers,
// however long that takes, instead of failing at the first refused connection and taking the process
// down with it. An error that says something else than "away" still fails at once.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Door } from '../../../test/faults/linkProxy.ts';
import { dropDatabase, Migration, openDatabase, sql, type MikroORM, type WarnSink } from '../src/index.ts';

const SERVER = '127.0.0.1:5432';
/** How long the server stays away: several of the wait's pauses (100 ms doubling up to 5 s). */
const AWAY_MS = 8_000;

class CreateMarks extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table db_away.marks (id int primary key)');
    this.addSql('insert into db_away.marks values (1)');
  }
}
const migrations = [{ name: 'db-away-0001', class: CreateMarks }];

const name = `oan_t_away_${randomBytes(4).toString('hex')}`;
const doors: Door[] = [];
const opened: MikroORM[] = [];
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close(true)));
  await Promise.all(doors.map((d) => d.close()));
  await dropDatabase(`postgres://postgres@${SERVER}/${name}`);
}, 60_000);

const told = (): { logger: WarnSink; warnings: { obj: object; msg: string }[] } => {
  const warnings: { obj: object; msg: string }[] = [];
  return { logger: { warn: (obj, msg) => warnings.push({ obj, msg }) }, warnings };
};

describe('openDatabase while the server does not answer', () => {
  it('waits for it, then creates the database and migrates it as usual', async () => {
    const door = await Door.shut(SERVER);
    doors.push(door);
    const { logger, warnings } = told();
    let settled: 'resolved' | 'rejected' | undefined;
    const opening = openDatabase({
      url: `postgres://postgres@127.0.0.1:${door.port}/${name}`,
      schema: 'db_away',
      migrations,
      logger,
    }).then(
      (orm) => {
        settled = 'resolved';
        opened.push(orm);
        return orm;
      },
      (err: unknown) => {
        settled = 'rejected';
        throw err;
      },
    );
    await new Promise((r) => setTimeout(r, AWAY_MS));
    expect(settled).toBeUndefined();
    expect(warnings.length).toBeGreaterThanOrEqual(3);
    expect(warnings[0]).toMatchObject({
      msg: 'database does not answer yet; waiting for it',
      obj: { what: 'create the database if missing', attempt: 0 },
    });
    expect(String((warnings[0]!.obj as { err: string }).err)).toContain('ECONNREFUSED');
    // The URL's user and password are never in what is told.
    expect(JSON.stringify(warnings)).not.toContain('postgres@');

    await door.open();
    const orm = await opening;
    expect(await sql<{ id: number }>(orm.em.fork(), 'select id from db_away.marks')).toEqual([{ id: 1 }]);
  }, 60_000);

  it('fails at once on an error that is not the server being away', async () => {
    const { logger, warnings } = told();
    const started = Date.now();
    // A role the server does not have: it answers, and refuses.
    await expect(
      openDatabase({ url: `postgres://no_such_role_${name}@${SERVER}/${name}`, schema: 'db_away', logger }),
    ).rejects.toMatchObject({ code: '28000' });
    expect(warnings).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
