import type { Decider } from '@oan/domain';
import type { ExpectStatic } from 'vitest';

/**
 * given(events).when(command).then(events) | .thenNothing() | .thenThrows(code, message?) — emmett's
 * DeciderSpecification, small, for every aggregate's unit tests. `expect` is the test runner's (this
 * package is also loaded outside it, by the dev runner and the benches).
 */
export function deciderSpec<S, E, C>(expect: ExpectStatic, decider: Decider<S, E, C>) {
  return (...given: E[]) => ({
    when: (command: C) => {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
      return {
        then: (...expected: E[]) => expect(run()).toEqual(expected),
        thenNothing: () => expect(run()).toEqual([]),
        thenThrows: (code: string, message?: string) =>
          expect(run).toThrow(expect.objectContaining(message === undefined ? { code } : { code, message })),
        /** The decided events, for assertions `then` cannot express. */
        events: run,
      };
    },
  });
}
