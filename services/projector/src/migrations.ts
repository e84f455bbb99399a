import { Migration, type MigrationDef } from '@oan/db';
import { appliedPositionsMigration, oanEventMigration, projectorMigration } from '@oan/projection';

class CreateAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.accounts (
      id text primary key, email text, source_platform text not null, banned_at timestamptz,
      created_at timestamptz not null)`);
  }
}

export const migrations: MigrationDef[] = [
  projectorMigration,
  oanEventMigration,
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
  appliedPositionsMigration,
];

/** Tables a replay empties before consuming from offset zero (invariant 3). */
export const READ_TABLES = [
  'read.oan_event',
  'read.oan_account_seq',
  'read.accounts',
  'read.applied_positions',
];
