import { expect } from 'vitest';

/** given(events).when(command).then(events) | .thenThrows(code) — emmett's DeciderSpecification, small. */
export function deciderSpec<S, E, C>(decider: {
  initialState: () => S;
  evolve: (s: S, e: E) => S;
  decide: (c: C, s: S) => E[];
}) {
  return (...given: E[]) => ({
    when: (command: C) => {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
      return {
        then: (...expected: E[]) => expect(run()).toEqual(expected),
        thenNothing: () => expect(run()).toEqual([]),
        thenThrows: (code: string) => expect(run).toThrow(expect.objectContaining({ code })),
      };
    },
  });
}
