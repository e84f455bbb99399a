import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, observeStatements, openDatabase, sql, type MikroORM } from '@oan/db';
import { fetchEvents } from '@oan/projection';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { envelopeText, toNotification, type Notification } from '../src/notifications.ts';
import { COPY_FROM_ROWS, writeEnvelopes } from '../src/stages/oan.ts';

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

  it('writes a large batch by COPY: the same rows, seqs and last seqs, special characters and all', async () => {
    const text = (i: number) => `line ${i}\n\t"quoted" back\\slash \\N \\. é🙂`;
    const big = Array.from({ length: COPY_FROM_ROWS * 2 + 1 }, (_, i) => ({
      ...note(`big${i}`, i % 3 === 0 ? 'E' : 'D'),
      payload: JSON.stringify({ kind: 'test', text: text(i) }),
    }));
    const statements: string[] = [];
    const stop = observeStatements((st) => statements.push(st.sql));
    let out;
    try {
      // A redelivered one among them (the first again) takes no seq.
      out = await write([...big, big[0]!]);
    } finally {
      stop();
    }
    expect(statements.filter((q) => q.startsWith('copy read.oan_event'))).toHaveLength(1);
    expect(out).toHaveLength(big.length);
    const rows = await sql<{
      account_id: string;
      seq: string;
      event_id: string;
      type: string;
      envelope: string;
      created_at: string;
    }>(
      orm.em.fork(),
      `select account_id, seq::text, event_id::text, type, envelope,
              to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
         from read.oan_event where account_id in ('D', 'E') order by account_id, oan_event.seq`,
    );
    const expected = big
      .map((n, i) => ({ n, o: out[i]! }))
      .map(({ n, o }) => ({
        account_id: n.accountId,
        seq: o.seq.toString(),
        event_id: n.eventId,
        type: n.type,
        envelope: envelopeText(n, o.seq),
        created_at: n.createdAt,
      }))
      .sort((a, b) => a.account_id.localeCompare(b.account_id) || Number(a.seq) - Number(b.seq));
    expect(rows).toEqual(expected);
    const eCount = Math.ceil(big.length / 3);
    expect(rows.filter((r) => r.account_id === 'E').map((r) => Number(r.seq))).toEqual(
      Array.from({ length: eCount }, (_, i) => i + 1),
    );
    expect(JSON.parse(rows[0]!.envelope)).toMatchObject({ payload: { text: text(1) } });
    // The recipients' last seqs moved with the rows, so a small batch after it (by the JSON statement)
    // goes on from them.
    const after = await write([note('after-d', 'D'), note('after-e', 'E')]);
    expect(after.map((o) => `${o.accountId}:${o.seq}`)).toEqual([
      `D:${big.length - eCount + 1}`,
      `E:${eCount + 1}`,
    ]);
  });
});
