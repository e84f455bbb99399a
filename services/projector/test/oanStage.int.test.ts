import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { fetchEvents } from '@oan/projection';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { toNotification, type Notification } from '../src/notifications.ts';
import { writeEnvelopes } from '../src/stages/oan.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;

beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'projector', migrations });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const note = (src: string, recipient: string): Notification =>
  toNotification(src, {
    recipient,
    type: 'system_notice',
    source: 'platform',
    payload: { kind: 'test', src },
    createdAt: '2026-11-29T08:00:00.000Z',
  });

const write = (batch: Notification[]) => orm.em.fork().transactional((em) => writeEnvelopes(em, batch));

describe('stage 2 (seq assignment)', () => {
  it('gives each account a dense seq from 1 in batch order', async () => {
    const out = await write([note('a1', 'A'), note('b1', 'B'), note('a2', 'A'), note('a3', 'A')]);
    expect(out.map((o) => `${o.accountId}:${o.seq}`)).toEqual(['A:1', 'B:1', 'A:2', 'A:3']);
    const more = await write([note('a4', 'A')]);
    expect(more[0]!.seq).toBe(4n);
  });

  it('skips a redelivered notification before it takes a seq, in later and in the same batch', async () => {
    const dup = await write([note('a2', 'A'), note('a5', 'A'), note('a5', 'A')]);
    expect(dup.map((o) => o.seq)).toEqual([5n]);
    const rows = await fetchEvents(orm.em.fork(), 'A', 0n, 200);
    expect(rows.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    const ids = rows.map((r) => (JSON.parse(r.envelope) as { eventId: string }).eventId);
    expect(new Set(ids).size).toBe(5);
  });

  it('stores the exact envelope text it returns', async () => {
    const [o] = await write([note('c1', 'C')]);
    const [row] = await sql<{ envelope: string }>(
      orm.em.fork(),
      'select envelope from read.oan_event where account_id = ?',
      ['C'],
    );
    expect(row!.envelope).toBe(o!.envelope);
  });
});
