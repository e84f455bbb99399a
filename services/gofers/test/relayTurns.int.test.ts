import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { createGofer } from '../src/commands/createGofer.ts';
import { publishOnRelay, recordRelayTurn } from '../src/commands/relay.ts';
import { relayTurnSnapshot } from '../src/infra/relayView.ts';
import { KeySealer } from '../src/relay/keys.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

/**
 * Relay turns are recorded from a bounded view of the Gofer (never its whole stream). Many callers
 * answered at once must all be recorded: a turn whose row is lost was a brain call for nothing.
 */
let fleet: GoferFleet;
beforeAll(async () => {
  fleet = await startGoferFleet();
});
afterAll(async () => fleet?.close());

describe('a published Gofer, when 16 callers’ turns are recorded at once', () => {
  it('records every one (they queue on the Gofer, none fails its version check)', async () => {
    const { accountId } = await fleet.account('dsh');
    const { goferId } = await createGofer(fleet.ctx, { accountId });
    await publishOnRelay(fleet.ctx, new KeySealer('s'.repeat(32)), { accountId, goferId });
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) =>
        recordRelayTurn(fleet.ctx, {
          goferId,
          caller: `0x${String(i).padStart(2, '0').repeat(32)}`,
          asked: `question ${i}`,
          answered: `answer ${i}`,
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const rows = (await fleet.events()).filter(
      (e) => e.streamId === `gofer-${goferId}` && (e.data as { kind?: string }).kind === 'relay',
    );
    expect(rows).toHaveLength(16);
  });
});

describe('a published Gofer whose role-chat holds thousands of rows', () => {
  it("reads a handful of its rows for a turn's view, and the turn records after the last", async () => {
    const { accountId } = await fleet.account('dsh');
    const { goferId } = await createGofer(fleet.ctx, { accountId });
    await publishOnRelay(fleet.ctx, new KeySealer('s'.repeat(32)), { accountId, goferId });
    const streamId = `gofer-${goferId}`;
    const turn = (i: number) => ({
      goferId,
      caller: `0x${'ab'.repeat(32)}`,
      asked: `question ${i}`,
      answered: `answer ${i}`,
    });
    await recordRelayTurn(fleet.ctx, turn(0));
    // Recording thousands of turns one by one takes too long here: copies of the real row stand in,
    // read as the real ones are. Analysed, so the planner sees the stream as it is.
    const em = fleet.orm.em.fork();
    await sql(
      em,
      `insert into gofers.events (event_id, stream_id, stream_version, type, version, account_id, data, occurred_at)
       select gen_random_uuid(), e.stream_id, e.stream_version + n, e.type, e.version, e.account_id, e.data, e.occurred_at
         from gofers.events e, generate_series(1, 3000) n
        where e.stream_id = ? and e.stream_version = (select max(stream_version) from gofers.events where stream_id = ?)`,
      [streamId, streamId],
    );
    await sql(em, 'analyze gofers.events');
    const [{ length } = { length: 0 }] = await sql<{ length: number }>(
      em,
      'select count(*)::int as length from gofers.events where stream_id = ?',
      [streamId],
    );
    expect(length).toBeGreaterThan(3000);

    // The turn's load, exactly as recordRelayTurn runs it, and what it read of the events table: the
    // connection's scan and row counts (Postgres keeps them as they happen) before and after it.
    const { view, touched } = await fleet.orm.em.fork().transactional(async (tx) => {
      const counts = async () => {
        const [c] = await sql<{ seqScans: number; seqRows: number; heapRows: number; indexRows: number }>(
          tx,
          `select pg_stat_get_xact_numscans(t.oid)::int as "seqScans",
             pg_stat_get_xact_tuples_returned(t.oid)::int as "seqRows",
             (pg_stat_get_xact_tuples_fetched(t.oid) + (select coalesce(sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)), 0)
               from pg_index i where i.indrelid = t.oid))::int as "heapRows",
             (select coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::int
               from pg_index i where i.indrelid = t.oid) as "indexRows"
           from pg_class t where t.oid = 'gofers.events'::regclass`,
        );
        return c!;
      };
      const before = await counts();
      const loaded = await relayTurnSnapshot('gofers', goferId).load(tx);
      const after = await counts();
      return {
        view: loaded,
        touched: {
          seqScans: after.seqScans - before.seqScans,
          seqRows: after.seqRows - before.seqRows,
          heapRows: after.heapRows - before.heapRows,
          indexRows: after.indexRows - before.indexRows,
        },
      };
    });
    expect(view?.version).toBe(length);
    expect(view?.state).toMatchObject({ status: 'active', goferId, relayAddress: expect.any(String) });
    // the Gofer's creation and publication, and the stream's last version
    expect(touched).toMatchObject({ seqScans: 0, seqRows: 0 });
    expect(touched.heapRows).toBeLessThanOrEqual(5);
    expect(touched.indexRows).toBeLessThanOrEqual(5);

    expect(await recordRelayTurn(fleet.ctx, turn(1))).toEqual({ appended: true });
    const [last] = await sql<{ stream_version: number; data: { kind: string; content: string } }>(
      em,
      'select stream_version, data from gofers.events where stream_id = ? order by stream_version desc limit 1',
      [streamId],
    );
    expect(last!.stream_version).toBe(length + 1);
    expect(last!.data.kind).toBe('relay');
    expect(last!.data.content).toContain(JSON.stringify('question 1'));
  });
});
