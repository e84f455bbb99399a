/**
 * The A2A tasks of published Gofers (ADR 0035), in the gofers event store. One stream per task,
 * `a2atask-<taskId>`, keyed by the Gofer owner's accountId. `task` is the JSON text of the whole
 * A2A Task (its protocol JSON form, history bounded), so a replay rebuilds the task exactly.
 */
export interface A2ATaskSaved {
  taskId: string;
  goferId: string;
  /** The Gofer's owner (the partition key). */
  accountId: string;
  /** Who asked: `key:<sha256 hex>` of the caller's bearer token, or `addr:<client address>`. */
  callerId: string;
  contextId: string;
  /** The A2A task state as its protocol name (`TASK_STATE_COMPLETED`, …). */
  state: string;
  task: string;
  savedAt: string;
}

export type A2AEvent = { type: 'A2ATaskSaved'; data: A2ATaskSaved };

export const a2aTaskStreamId = (taskId: string) => `a2atask-${taskId}`;
