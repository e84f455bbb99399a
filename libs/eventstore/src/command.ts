import type { EntityManager, MikroORM } from '@oan/db';
import type { EventStore } from './store';
import { ConcurrencyError, type NewEvent, type StoredEvent } from './types';

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
  } = {},
): Promise<CommandResult<State>> {
  const retries = opts.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      return await orm.em.fork().transactional(async (em) => {
        const history = await store.readStream(em, streamId);
        const state = history.reduce(
          (s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event),
          decider.initialState(),
        );
        const events = await decide(state);
        const appended = await store.append(em, [
          { streamId, expectedVersion: history.length === 0 ? 'no_stream' : history.length, events },
        ]);
        const next = appended.reduce(
          (s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event),
          state,
        );
        if (opts.inline) await opts.inline(em, appended, next);
        return { state: next, appended };
      });
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) continue;
      throw err;
    }
  }
}
