import { sql } from '@oan/db';
import type { A2AEvent } from '@oan/domain';
import { projection } from '../types.ts';

/**
 * The A2A tasks' projection: `read.a2a_tasks`, one row per task, its last saved form. A save older
 * than the row (by position in the store) changes nothing, so a redelivered event is a no-op.
 * Tasks notify no one: the owner hears of each turn through its role-chat row (ChatMessageAdded).
 */
export const a2aProjection = projection<A2AEvent>({
  async A2ATaskSaved(em, { position, data: d }) {
    await sql(
      em,
      `insert into read.a2a_tasks (task_id, gofer_id, account_id, caller_id, context_id, state, task, saved_at, position)
       values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)
       on conflict (task_id) do update set state = excluded.state, task = excluded.task,
         saved_at = excluded.saved_at, position = excluded.position
       where read.a2a_tasks.position is null or read.a2a_tasks.position < excluded.position`,
      [
        d.taskId,
        d.goferId,
        d.accountId,
        d.callerId,
        d.contextId,
        d.state,
        d.task,
        d.savedAt,
        position === null ? null : String(position),
      ],
    );
    return [];
  },
});
