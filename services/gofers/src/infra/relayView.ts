import { sql, type EntityManager } from '@oan/db';
import { goferStreamId, type GoferEvent } from '@oan/domain';
import type { Snapshot, StoredEvent } from '@oan/eventstore';
import { goferDecider } from '../domain/gofer.ts';
import type { GoferState } from '../domain/goferState.ts';

/**
 * The events that decide whether and as whom a Gofer answers a relay caller, as SQL (literal, so
 * the partial index `events_relay_deciding` of the gofers migrations serves the query).
 */
export const DECIDING_TYPES = `('GoferCreated', 'GoferProfileUpdated', 'GoferDeleted', 'GoferRelayPublished', 'GoferRelayUnpublished')`;

/** Likewise for an A2A turn (ADR 0035), served by the partial index `events_a2a_deciding`. */
export const A2A_DECIDING_TYPES = `('GoferCreated', 'GoferProfileUpdated', 'GoferDeleted', 'GoferA2APublished', 'GoferA2AUnpublished')`;

/**
 * A relay turn's view of a Gofer without reading its whole stream (one row per role-chat message,
 * so it grows with every turn): the newest event of each deciding type, folded in stream order,
 * and the stream's version. Its messages, answered set and attachments are empty: only what a
 * relay turn needs holds (status, relay address, profile, locale, ids), which is what the
 * `AddRelayTurn` decision reads. At most five events are read whatever the stream's length, through
 * an index of those types only.
 */
export async function relayView(
  em: EntityManager,
  schema: string,
  goferId: string,
  types: string = DECIDING_TYPES,
): Promise<{ state: GoferState; version: number }> {
  const streamId = goferStreamId(goferId);
  const rows = await sql<{ type: string; data: unknown; stream_version: number }>(
    em,
    `select * from (
       select distinct on (type) type, data, stream_version from "${schema}".events
        where stream_id = ? and type in ${types} order by type, stream_version desc) newest
      order by stream_version`,
    [streamId],
  );
  const [head] = await sql<{ v: number | null }>(
    em,
    `select max(stream_version) as v from "${schema}".events where stream_id = ?`,
    [streamId],
  );
  const state = rows
    .map((r) => ({ type: r.type, data: r.data }) as GoferEvent)
    .reduce(goferDecider.evolve, goferDecider.initialState());
  return { state, version: head?.v ?? 0 };
}

/**
 * The command handler's `snapshot` option over that view, for `AddRelayTurn` only: the state is
 * loaded as above and nothing is saved (it is derived again next time). The Gofer's relay row is
 * locked first, so the turns of many callers answered at once queue instead of failing their
 * version check (each lost turn was a brain call for nothing); the append still expects the
 * stream's version, so another command's write meanwhile makes the turn run again.
 */
export const relayTurnSnapshot = (schema: string, goferId: string): Snapshot<GoferState> => ({
  load: async (em) => {
    await sql(em, 'select 1 from gofers.relay_agents where gofer_id = ? for update', [goferId]);
    const view = await relayView(em, schema, goferId);
    return view.version === 0 ? null : view;
  },
  save: async (
    _em: EntityManager,
    _state: GoferState,
    _version: number,
    _appended: readonly StoredEvent[],
  ) => {
    // Derived from the events each time: nothing to keep.
  },
});

/**
 * The same for `AddA2ATurn` (ADR 0035): the view over the A2A deciding events, after locking the
 * Gofer's row of `gofers.a2a_agents`, so the turns of many A2A callers queue on the Gofer.
 */
export const a2aTurnSnapshot = (schema: string, goferId: string): Snapshot<GoferState> => ({
  load: async (em) => {
    await sql(em, 'select 1 from gofers.a2a_agents where gofer_id = ? for update', [goferId]);
    const view = await relayView(em, schema, goferId, A2A_DECIDING_TYPES);
    return view.version === 0 ? null : view;
  },
  save: async () => {
    // Derived from the events each time: nothing to keep.
  },
});
