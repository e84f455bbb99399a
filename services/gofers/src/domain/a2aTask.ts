import type { A2AEvent, A2ATaskSaved, Decider, Timed } from '@oan/domain';
import { IllegalStateError } from './errors.ts';

/** Stream `a2atask-<taskId>`: one A2A task of a published Gofer, as the SDK last saved it (ADR 0035). */
export type A2ATaskState =
  { status: 'none' } | { status: 'saved'; goferId: string; callerId: string; state: string; task: string };

export type A2ATaskCommand = { type: 'SaveA2ATask'; data: Omit<A2ATaskSaved, 'savedAt'> };

/** The states after which a task never changes (A2A: completed, failed, canceled, rejected). */
export const TERMINAL_STATES: ReadonlySet<string> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

export function evolveA2ATask(state: A2ATaskState, event: A2AEvent): A2ATaskState {
  switch (event.type) {
    case 'A2ATaskSaved': {
      const { goferId, callerId, state: s, task } = event.data;
      return { status: 'saved', goferId, callerId, state: s, task };
    }
    default: {
      const unexpected: never = event.type;
      return unexpected;
    }
  }
}

/**
 * A save of the task as it stands now. A terminal task is never changed, a task is never moved to
 * another Gofer or caller, and a save that changes nothing appends nothing.
 */
export function saveA2ATask(state: A2ATaskState, d: A2ATaskCommand['data'], now: string): A2AEvent[] {
  if (state.status === 'saved') {
    if (state.goferId !== d.goferId || state.callerId !== d.callerId)
      throw new IllegalStateError('A2A_TASK_FOREIGN', 'The task belongs to another caller');
    if (state.state === d.state && state.task === d.task) return [];
    if (TERMINAL_STATES.has(state.state))
      throw new IllegalStateError('A2A_TASK_TERMINAL', 'The task is terminal');
  }
  return [{ type: 'A2ATaskSaved', data: { ...d, savedAt: now } }];
}

export const a2aTaskDecider: Decider<A2ATaskState, A2AEvent, Timed<A2ATaskCommand>> = {
  initialState: () => ({ status: 'none' }),
  evolve: evolveA2ATask,
  decide: (command, state) => {
    switch (command.type) {
      case 'SaveA2ATask':
        return saveA2ATask(state, command.data, command.metadata.now);
      default: {
        const unexpected: never = command.type;
        throw new Error(`Unknown command ${String(unexpected)}`);
      }
    }
  },
};
