import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { EventStore } from './store.ts';
import type { StoredEvent } from './types.ts';

/**
 * The migration of a store's command ids (`<schema>.commands`): list it after `store.migration()` in
 * a service whose commands may carry a command id (`handleCommand`'s `commandId`).
 */
export function commandIdsMigration(store: EventStore): MigrationDef {
  const s = store.schema;
  class CreateCommandIds extends Migration {
    override async up(): Promise<void> {
      this.addSql(`create table if not exists "${s}".commands (
        command_id text primary key,
        result jsonb not null default '{}'::jsonb,
        recorded_at timestamptz not null default now())`);
    }
  }
  return { name: `${s}-0000-command-ids`, class: CreateCommandIds };
}

/** What a command recorded under its id: the events it appended, and a multi-stream command's result. */
export interface RecordedCommand {
  eventIds: string[];
  result?: unknown;
}

/**
 * Takes `commandId` inside the command's transaction, or returns what the command recorded when it
 * ran before. The insert comes first: a second transaction with the same id waits on the row until
 * the first commits (then reads its record) or rolls back (then takes the id itself), so two racing
 * commands with one id never both decide.
 */
export async function takeCommandId(
  em: EntityManager,
  store: EventStore,
  commandId: string,
): Promise<RecordedCommand | null> {
  const s = store.schema;
  const taken = await sql<{ command_id: string }>(
    em,
    `insert into "${s}".commands (command_id) values (?) on conflict do nothing returning command_id`,
    [commandId],
  );
  if (taken.length > 0) return null;
  const [row] = await sql<{ result: RecordedCommand }>(
    em,
    `select result from "${s}".commands where command_id = ?`,
    [commandId],
  );
  if (!row) throw new Error(`command ${commandId} is neither new nor recorded`);
  return row.result;
}

/** Records what the command whose id was taken appended (and its result), in the append's transaction. */
export async function recordCommand(
  em: EntityManager,
  store: EventStore,
  commandId: string,
  appended: readonly StoredEvent[],
  result?: unknown,
): Promise<void> {
  const recorded: RecordedCommand = {
    eventIds: appended.map((e) => e.eventId),
    ...(result === undefined ? {} : { result }),
  };
  await sql(em, `update "${store.schema}".commands set result = ?::jsonb where command_id = ?`, [
    JSON.stringify(recorded),
    commandId,
  ]);
}

/** The events a recorded command appended, in their order. */
export async function recordedEvents(
  em: EntityManager,
  store: EventStore,
  recorded: RecordedCommand,
): Promise<StoredEvent[]> {
  if (recorded.eventIds.length === 0) return [];
  return store.readEvents(em, recorded.eventIds);
}
