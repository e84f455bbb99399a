import { a2aTaskStreamId, type A2AEvent } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

/** The A2A task events of one task of a Gofer. */
export function a2aTaskOf(taskId: string, goferId: string, accountId: string) {
  return eventBuilders<A2AEvent>(
    {
      A2ATaskSaved: () => ({
        taskId,
        goferId,
        accountId,
        callerId: 'key:abc',
        contextId: 'ctx-1',
        state: 'TASK_STATE_SUBMITTED',
        task: JSON.stringify({ id: taskId, contextId: 'ctx-1', status: { state: 'TASK_STATE_SUBMITTED' } }),
        savedAt: at(1),
      }),
    },
    ({ data }) => ({ streamId: a2aTaskStreamId(data.taskId), partitionKey: data.accountId }),
  );
}
