import { Migration, type MigrationDef } from '@oan/db';
import { commandIdsMigration, EventStore } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

/** The matching event store (`matching.events`, `matching.outbox`); every event is checked against its Avro schema. */
export const createMatchingStore = () =>
  new EventStore('matching', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * Lookups of the write side, written in the same transaction as the event that creates the row
 * (src/commands/context.ts), so they never lag behind the stream (docs/adr/0012):
 * - `request_threads`: which thread a match request lives in (`MatchRequested`), for
 *   `POST /match-requests/:requestId/decision`;
 * - `gofer_threads`: the threads of a Gofer and of an account (`ThreadProposed`, both sides), for
 *   `GET /threads` (and, later, the GoferDeleted reactor and discovery's "already paired").
 */
class CreateLookups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists matching.request_threads (
      request_id text primary key,
      thread_id text not null)`);
    this.addSql(`create table if not exists matching.gofer_threads (
      gofer_id text not null,
      thread_id text not null,
      account_id text not null,
      primary key (gofer_id, thread_id))`);
    this.addSql(
      'create index if not exists gofer_threads_account on matching.gofer_threads (account_id, thread_id)',
    );
  }
}

/** Schema `matching`: the event store, then the inline lookups. */
export const matchingMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  commandIdsMigration(store),
  { name: 'matching-0001-lookups', class: CreateLookups },
];
