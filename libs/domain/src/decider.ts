/** Every command carries the time its events are stamped with. */
export type Timed<C> = C & { metadata: { now: string } };

/**
 * An aggregate's decider: pure `decide` and `evolve` from an initial state. The command handler
 * (`@oan/eventstore`) folds a stream with `evolve` and asks `decide`; the given / when / then tests
 * (`@oan/testing`) do the same over the events they are given. Types only: a domain folder may
 * import it without importing any infrastructure.
 */
export interface Decider<State, Event, Command> {
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
  decide: (command: Command, state: State) => Event[];
}
