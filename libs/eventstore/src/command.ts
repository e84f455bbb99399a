import type { EntityManager, MikroORM } from '@oan/db';
import type { EventStore } from './store.ts';
import { ConcurrencyError, type NewEvent, type StoredEvent } from './types.ts';

export interface Decider<State, Event> {
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
}

export interface CommandResult<State> {
  state: State;
  appended: StoredEvent[];
}

/**
 * load → fold → decide → append with the expected version, in one transaction; on a version
 * conflict the whole thing runs again (bounded). `decide` may throw a coded error to refuse.
 * `inline` runs in the same transaction after the append (inline projections of the write side).
 */
export async function handleCommand<State, Event extends { type: string; data: unknown }>(
  orm: MikroORM,
  store: EventStore,
  streamId: string,
  decider: Decider<State, Event>,
  decide: (state: State) => NewEvent[] | Promise<NewEvent[]>,
  opts: {
    retries?: number;
    inline?: (em: EntityManager, appended: StoredEvent[], state: State) => Promise<void>;
    /**
     * The stream id was made fresh for this command (a random UUID): there is no history to load,
     * and the append (expected `no_stream`) is one statement, atomic without a transaction. A stream
     * that exists after all fails it with ConcurrencyError, like any conflict.
     */
    newStream?: boolean;
  } = {},
): Promise<CommandResult<State>> {
  const fold = (state: State, events: readonly StoredEvent[]) =>
    events.reduce((s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event), state);
  if (opts.newStream && !opts.inline) {
    const state = decider.initialState();
    const events = await decide(state);
    // The store sends nothing for no events; one statement otherwise.
    const appended = await store.append(orm.em.fork(), [{ streamId, expectedVersion: 'no_stream', events }]);
    if (appended.length > 0) store.committed(orm);
    return { state: fold(state, appended), appended };
  }
  const retries = opts.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await orm.em.fork().transactional(async (em) => {
        const history = await store.readStream(em, streamId);
        const state = fold(decider.initialState(), history);
        const events = await decide(state);
        const appended = await store.append(em, [
          { streamId, expectedVersion: history.length === 0 ? 'no_stream' : history.length, events },
        ]);
        const next = fold(state, appended);
        if (opts.inline) await opts.inline(em, appended, next);
        return { state: next, appended };
      });
      if (result.appended.length > 0) store.committed(orm);
      return result;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) continue;
      throw err;
    }
  }
}

/** Reads a stream inside a multi-stream command and folds it; the append expects that version. */
export type LoadStream = <State, Event extends { type: string; data: unknown }>(
  streamId: string,
  decider: Decider<State, Event>,
) => Promise<State>;

/**
 * `handleCommand` for a decision that spans streams, where which stream comes next may depend on
 * an earlier one's state (a pairing code names its account): `decide` loads each stream it needs,
 * and returns the events per stream; every append expects the version it loaded, all in one
 * transaction, so of two racing commands on a shared stream exactly one commits and the other runs
 * again (bounded) against what the first wrote. Returns what was appended, in stream order.
 */
export async function handleMultiStreamCommand<Result>(
  orm: MikroORM,
  store: EventStore,
  decide: (
    load: LoadStream,
  ) => Promise<{ appends: { streamId: string; events: NewEvent[] }[]; result: Result }>,
  opts: {
    retries?: number;
    inline?: (em: EntityManager, appended: StoredEvent[]) => Promise<void>;
  } = {},
): Promise<{ result: Result; appended: StoredEvent[] }> {
  const retries = opts.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await orm.em.fork().transactional(async (em) => {
        const versions = new Map<string, number>();
        const load: LoadStream = async (streamId, decider) => {
          const history = await store.readStream(em, streamId);
          versions.set(streamId, history.length);
          return history.reduce(
            (s, e) =>
              decider.evolve(s, { type: e.type, data: e.data } as Parameters<typeof decider.evolve>[1]),
            decider.initialState(),
          );
        };
        const { appends, result } = await decide(load);
        const appended = await store.append(
          em,
          appends.map(({ streamId, events }) => {
            const loaded = versions.get(streamId);
            if (loaded === undefined)
              throw new Error(`stream ${streamId} was appended to without being loaded`);
            return { streamId, expectedVersion: loaded === 0 ? ('no_stream' as const) : loaded, events };
          }),
        );
        if (opts.inline) await opts.inline(em, appended);
        return { result, appended };
      });
      if (outcome.appended.length > 0) store.committed(orm);
      return outcome;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) continue;
      throw err;
    }
  }
}
