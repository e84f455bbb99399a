import type { EntityManager, MikroORM } from '@oan/db';
import type { Decider } from '@oan/domain';
import type { EventStore } from './store.ts';
import { ConcurrencyError, type NewEvent, type StoredEvent } from './types.ts';

/** What loading a stream needs of an aggregate's decider: its initial state and `evolve`. */
export type Fold<State, Event> = Pick<Decider<State, Event, never>, 'initialState' | 'evolve'>;

export interface CommandResult<State> {
  state: State;
  appended: StoredEvent[];
}

/**
 * A stream's decision state kept as one row beside the stream (a snapshot), for a stream too long to
 * fold per command (a conversation: one event per message). The row is read under a row lock, so
 * commands on the stream queue instead of failing their version check, and written back evolved in
 * the append's transaction; it is derived from the events alone (the owner can rebuild it).
 */
export interface Snapshot<State> {
  /** The state and the stream version it stands for, the row locked (`select … for update`); null before the first event. */
  load: (em: EntityManager) => Promise<{ state: State; version: number } | null>;
  /**
   * Writes the evolved state back at the stream's new version (the first save inserts the row).
   * `appended` are the events it was evolved by: an owner may write its lookups of them in the same
   * statement (a send's round trips count while the row is locked).
   */
  save: (em: EntityManager, state: State, version: number, appended: readonly StoredEvent[]) => Promise<void>;
}

/**
 * load → fold → decide → append with the expected version, in one transaction; on a version
 * conflict the whole thing runs again (bounded). `decide` may throw a coded error to refuse; it gets
 * the transaction to read facts its decision needs beside the state (write-side lookups).
 * `inline` runs in the same transaction after the append (inline projections of the write side).
 * With `snapshot` the state is that row instead of the folded history (see `Snapshot`).
 */
export async function handleCommand<State, Event extends { type: string; data: unknown }>(
  orm: MikroORM,
  store: EventStore,
  streamId: string,
  decider: Fold<State, Event>,
  decide: (state: State, em: EntityManager) => NewEvent[] | Promise<NewEvent[]>,
  opts: {
    retries?: number;
    inline?: (em: EntityManager, appended: StoredEvent[], state: State) => Promise<void>;
    /** Load the state from this row instead of folding the stream, and save it with the append. */
    snapshot?: Snapshot<State>;
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
  if (opts.newStream && !opts.inline && !opts.snapshot) {
    const state = decider.initialState();
    const em = orm.em.fork();
    const events = await decide(state, em);
    // The store sends nothing for no events; one statement otherwise.
    const appended = await store.append(em, [{ streamId, expectedVersion: 'no_stream', events }]);
    if (appended.length > 0) store.committed(orm);
    return { state: fold(state, appended), appended };
  }
  const load = async (em: EntityManager): Promise<{ state: State; version: number }> => {
    if (opts.snapshot) return (await opts.snapshot.load(em)) ?? { state: decider.initialState(), version: 0 };
    const history = await store.readStream(em, streamId);
    return { state: fold(decider.initialState(), history), version: history.length };
  };
  const retries = opts.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await orm.em.fork().transactional(async (em) => {
        const { state, version } = await load(em);
        const events = await decide(state, em);
        const appended = await store.append(em, [
          { streamId, expectedVersion: version === 0 ? 'no_stream' : version, events },
        ]);
        const next = fold(state, appended);
        const last = appended.at(-1);
        if (opts.snapshot && last) await opts.snapshot.save(em, next, last.streamVersion, appended);
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
  decider: Fold<State, Event>,
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
