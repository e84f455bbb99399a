import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, observeStatements, openDatabase, sql, type MikroORM } from '@oan/db';
import { fetchEvents, type OffsetMove } from '@oan/projection';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { envelopeText, toNotification, type Notification } from '../src/notifications.ts';
import { COPY_FROM_ROWS, writeEnvelopes, writeEnvelopesAlone } from '../src/stages/oan.ts';

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

describe('stage 2 as one statement (ADR 0059)', () => {
  /** A partition of its own per test, its stored offset at 0. */
  let partition = 100;
  const freshPartition = async () => {
    partition += 1;
    await sql(
      orm.em.fork(),
      `insert into projector.offsets (consumer, topic, partition, next_offset) values ('oan', 't', ?, 0)`,
      [partition],
    );
    return partition;
  };
  const move = (p: number, expected: bigint, next: bigint): OffsetMove => ({
    consumer: 'oan',
    topic: 't',
    partition: p,
    expected,
    next,
  });
  const storedOffset = async (p: number) =>
    (
      await sql<{ n: string }>(
        orm.em.fork(),
        `select next_offset::text as n from projector.offsets where consumer = 'oan' and topic = 't' and partition = ?`,
        [p],
      )
    )[0]!.n;
  const rowsOf = (account: string) =>
    sql<{ seq: string; event_id: string; envelope: string }>(
      orm.em.fork(),
      'select seq::text, event_id::text, envelope from read.oan_event where account_id = ? order by seq',
      [account],
    );

  it('numbers, writes and returns what the transaction would, byte for byte, and moves the offset', async () => {
    const p = await freshPartition();
    // Stored already by the transaction: the statement goes on after it and skips its redelivery.
    await write([note('s1', 'SA')]);
    const n = {
      ...note('s2', 'SA'),
      goferId: 'g-1',
      chatId: 'c-1',
      responseConstraints: JSON.stringify({ format: 'boolean' }),
      replyPath: '/api/v1/x',
      webUrl: 'https://example.com/"quoted"\\é🙂',
      payload: JSON.stringify({ text: 'line\n\t"q" \\ é🙂' }),
    };
    const batch = [note('s1', 'SA'), n, note('t1', 'SB'), note('s3', 'SA'), n, note('t2', 'SB')];
    const out = await writeEnvelopesAlone(orm.em.fork(), batch, move(p, 0n, 6n));
    expect(out!.moved).toBe(true);
    expect(out!.result.map((o) => `${o.accountId}:${o.seq}`)).toEqual(['SA:2', 'SB:1', 'SA:3', 'SB:2']);
    const expected = [n, note('t1', 'SB'), note('s3', 'SA'), note('t2', 'SB')].map((m, i) =>
      envelopeText(m, out!.result[i]!.seq),
    );
    expect(out!.result.map((o) => o.envelope)).toEqual(expected);
    const sa = await rowsOf('SA');
    expect(sa.map((r) => r.seq)).toEqual(['1', '2', '3']);
    expect(sa[1]!.envelope).toBe(expected[0]);
    expect(JSON.parse(sa[1]!.envelope)).toMatchObject({
      seq: '2',
      webUrl: n.webUrl,
      payload: JSON.parse(n.payload),
    });
    expect(await storedOffset(p)).toBe('6');
    // The transaction goes on from the seqs the statement wrote.
    const after = await write([note('s4', 'SA'), note('t3', 'SB')]);
    expect(after.map((o) => `${o.accountId}:${o.seq}`)).toEqual(['SA:4', 'SB:3']);
  });

  it('writes nothing where the stored offset is not the one expected', async () => {
    const p = await freshPartition();
    const out = await writeEnvelopesAlone(orm.em.fork(), [note('u1', 'UA')], move(p, 3n, 4n));
    expect(out).toEqual({ moved: false, result: [] });
    expect(await rowsOf('UA')).toEqual([]);
    expect(await storedOffset(p)).toBe('0');
  });

  it('leaves a batch that carries a direct message, or one for COPY, to the transaction', async () => {
    const p = await freshPartition();
    const relay = { ...note('r1', 'RA'), type: 'relay_message' as const };
    expect(await writeEnvelopesAlone(orm.em.fork(), [relay], move(p, 0n, 1n))).toBeUndefined();
    const big = Array.from({ length: COPY_FROM_ROWS }, (_, i) => note(`rb${i}`, 'RA'));
    expect(await writeEnvelopesAlone(orm.em.fork(), big, move(p, 0n, 64n))).toBeUndefined();
    expect(await storedOffset(p)).toBe('0');
  });

  it('of two members racing with the same batch, one writes it once and the other nothing', async () => {
    const p = await freshPartition();
    const batch = Array.from({ length: 10 }, (_, i) => note(`race${i}`, i % 2 ? 'RX' : 'RY'));
    const results = await Promise.all(
      Array.from({ length: 6 }, () => writeEnvelopesAlone(orm.em.fork(), batch, move(p, 0n, 10n))),
    );
    expect(results.filter((r) => r!.moved)).toHaveLength(1);
    expect(results.filter((r) => !r!.moved).every((r) => r!.result.length === 0)).toBe(true);
    for (const account of ['RX', 'RY']) {
      expect((await rowsOf(account)).map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    }
    expect(await storedOffset(p)).toBe('10');
  });
});
