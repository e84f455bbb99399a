import type { EntityManager, MikroORM } from '@oan/db';
import type { Decider, Timed } from '@oan/domain';
import { recordCommand, recordedEvents, takeCommandId } from './commandIds.ts';
import type { EventStore } from './store.ts';
import { ConcurrencyError, type NewEvent, type StoredEvent } from './types.ts';

/** What loading a stream needs of an aggregate's decider: its initial state and `evolve`. */
export type Fold<State, Event> = Pick<Decider<State, Event, never>, 'initialState' | 'evolve'>;

export interface CommandResult<State> {
  state: State;
  appended: StoredEvent[];
  /**
   * The command id was recorded before: nothing was decided or appended now, `appended` are the
   * events the first run appended and `state` the stream's state now.
   */
  repeated?: true;
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
     * and the append (expected `no_stream`) is atomic without a transaction: one statement with the
     * other new streams appended in the same turn of the event loop (`EventStore.appendCommitted`).
     * A stream that exists after all fails it with ConcurrencyError, like any conflict.
     */
    newStream?: boolean;
    /**
     * Exactly once: the command's id, recorded in the append's transaction (`<schema>.commands`,
     * `commandIdsMigration`). An id recorded before appends nothing and answers the events it
     * appended then (`repeated`), even after a crash between the caller's steps.
     */
    commandId?: string;
  } = {},
): Promise<CommandResult<State>> {
  const fold = (state: State, events: readonly StoredEvent[]) =>
    events.reduce((s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event), state);
  const { commandId } = opts;
  if (opts.newStream && !opts.inline && !opts.snapshot && commandId === undefined) {
    const state = decider.initialState();
    const em = orm.em.fork();
    const events = await decide(state, em);
    // The store sends nothing for no events; otherwise one statement, shared with the other new
    // streams of this turn of the event loop (the store's group commit).
    const appended = await store.appendCommitted(orm, [{ streamId, expectedVersion: 'no_stream', events }]);
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
      const result = await orm.em.fork().transactional(async (em): Promise<CommandResult<State>> => {
        const recorded = commandId === undefined ? null : await takeCommandId(em, store, commandId);
        if (recorded) {
          const appended = await recordedEvents(em, store, recorded);
          return { state: (await load(em)).state, appended, repeated: true };
        }
        const { state, version } = await load(em);
        const events = await decide(state, em);
        const appended = await store.append(em, [
          { streamId, expectedVersion: version === 0 ? 'no_stream' : version, events },
        ]);
        const next = fold(state, appended);
        const last = appended.at(-1);
        if (opts.snapshot && last) await opts.snapshot.save(em, next, last.streamVersion, appended);
        if (opts.inline) await opts.inline(em, appended, next);
        if (commandId !== undefined) await recordCommand(em, store, commandId, appended);
        return { state: next, appended };
      });
      if (result.appended.length > 0 && !result.repeated) store.committed(orm);
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
    /**
     * Exactly once, as `handleCommand`'s: an id recorded before appends nothing and answers the
     * recorded `result` (so it must be JSON) and events, with `repeated`.
     */
    commandId?: string;
  } = {},
): Promise<{ result: Result; appended: StoredEvent[]; repeated?: true }> {
  const retries = opts.retries ?? 5;
  const { commandId } = opts;
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await orm.em.fork().transactional(async (em) => {
        const recorded = commandId === undefined ? null : await takeCommandId(em, store, commandId);
        if (recorded) {
          const appended = await recordedEvents(em, store, recorded);
          return { result: recorded.result as Result, appended, repeated: true as const };
        }
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
        if (commandId !== undefined) await recordCommand(em, store, commandId, appended, result ?? null);
        return { result, appended };
      });
      if (outcome.appended.length > 0 && !('repeated' in outcome)) store.committed(orm);
      return outcome;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) continue;
      throw err;
    }
  }
}

/** What one call of a `commandHandler` may add to the handler's own settings. */
export interface CommandOptions<State> {
  /** The stream id is fresh for this command: see `handleCommand`'s `newStream`. */
  newStream?: boolean;
  /** Runs in the append's transaction, after the handler's own `inline`. */
  inline?: (em: EntityManager, appended: StoredEvent[], state: State) => Promise<void>;
  /** The command's time when the caller already took it (data derived from it); else the clock's. */
  now?: Date;
  /** Accounts besides the partition key's that act through this command (for `remember`). */
  callers?: readonly string[];
  /** Load the state from this row instead of folding the stream (see `Snapshot`). */
  snapshot?: Snapshot<State>;
  /** Exactly once under this id (see `handleCommand`'s `commandId`). */
  commandId?: string;
}

/** A command, or one built in the command's transaction from the state and rows it reads there. */
export type CommandOn<State, Command> =
  Command | ((state: State, em: EntityManager) => Command | Promise<Command>);

/**
 * One aggregate's command handling: stamps the command with the time, decides it against the
 * folded stream, maps the events to NewEvents under their partition key, appends them with the
 * expected version (retried on a conflict, `handleCommand`), and after the commit lets the owner
 * remember its write so that its next read waits for the projector (read-your-writes).
 */
export function commandHandler<State, Event extends { type: string; data: unknown }, Command>(deps: {
  orm: MikroORM;
  store: EventStore;
  decider: Decider<State, Event, Timed<Command>>;
  now: () => Date;
  /** The Kafka key of the events one command decided (never called with none). */
  partitionKey: (state: State, events: readonly Event[], command: Command) => string;
  /** Runs in every append's transaction (the write side's inline projections and lookups). */
  inline?: (em: EntityManager, appended: StoredEvent[], state: State) => Promise<void>;
  /** After a commit that appended: its last event, for the writer's read-your-writes. */
  remember?: (last: StoredEvent, callers: readonly string[], command: Command) => Promise<void>;
  /** A deterministic event id or an own time for an event (both writers of a fact write one event). */
  stamp?: (event: Event, command: Command) => Partial<Pick<NewEvent, 'eventId' | 'occurredAt'>>;
  retries?: number;
}): CommandHandler<State, Command> {
  return async (streamId, commandOn, options = {}) => {
    let command: Command | undefined;
    const inlines = [deps.inline, options.inline].filter((f) => f !== undefined);
    const result = await handleCommand(
      deps.orm,
      deps.store,
      streamId,
      deps.decider,
      async (state, em) => {
        const c =
          typeof commandOn === 'function' ? await (commandOn as Built<State, Command>)(state, em) : commandOn;
        command = c;
        const now = (options.now ?? deps.now()).toISOString();
        const events = deps.decider.decide({ ...c, metadata: { now } }, state);
        if (events.length === 0) return [];
        const partitionKey = deps.partitionKey(state, events, c);
        return events.map((e) => ({
          type: e.type,
          data: e.data,
          partitionKey,
          occurredAt: now,
          ...deps.stamp?.(e, c),
        }));
      },
      {
        ...(deps.retries !== undefined ? { retries: deps.retries } : {}),
        ...(options.newStream ? { newStream: true } : {}),
        ...(options.snapshot ? { snapshot: options.snapshot } : {}),
        ...(options.commandId !== undefined ? { commandId: options.commandId } : {}),
        ...(inlines.length > 0
          ? {
              inline: async (em: EntityManager, appended: StoredEvent[], state: State) => {
                for (const inline of inlines) await inline(em, appended, state);
              },
            }
          : {}),
      },
    );
    const last = result.appended.at(-1);
    // a repeated command decided nothing now (`command` unset): its caller's read waits for nothing new.
    if (last && deps.remember && command !== undefined)
      await deps.remember(last, options.callers ?? [], command);
    return result;
  };
}

type Built<State, Command> = (state: State, em: EntityManager) => Command | Promise<Command>;

/** The function a `commandHandler` returns. */
export type CommandHandler<State, Command> = (
  streamId: string,
  command: CommandOn<State, Command>,
  options?: CommandOptions<State>,
) => Promise<CommandResult<State>>;
