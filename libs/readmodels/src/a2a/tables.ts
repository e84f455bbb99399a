import { Migration, type MigrationDef } from '@oan/db';

/**
 * The A2A tasks of published Gofers (ADR 0035): each task as it was last saved, rebuilt from the
 * `A2ATaskSaved` events by a replay. The gofers service answers callers from its own inline table
 * (`gofers.a2a_tasks`, consistent with its writes); this one is the log's view of them.
 */
class CreateA2ATasksReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.a2a_tasks (
      task_id text primary key, gofer_id text not null, account_id text not null, caller_id text not null,
      context_id text not null, state text not null, task jsonb not null, saved_at timestamptz not null,
      position bigint)`);
    this.addSql(
      'create index if not exists a2a_tasks_gofer on read.a2a_tasks (gofer_id, caller_id, saved_at desc)',
    );
  }
}

/** This read model's tables, in migration order. */
export const a2aTables: MigrationDef[] = [{ name: 'read-0012-a2a-tasks', class: CreateA2ATasksReadModel }];
