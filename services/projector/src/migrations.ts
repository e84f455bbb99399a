import { Migration, type MigrationDef } from '@oan/db';
import { appliedPositionsMigration, oanEventMigration, projectorMigration } from '@oan/projection';

class CreateAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.accounts (
      id text primary key, email text, source_platform text not null, banned_at timestamptz,
      created_at timestamptz not null)`);
  }
}

class CreateGofersReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.gofers (
      id text primary key, account_id text not null, chat_id text not null, name text not null,
      description text not null, locale text not null, source_platform text not null,
      discovery_status text not null, human_review_triggers jsonb not null, "values" jsonb not null,
      demands jsonb not null, created_at timestamptz not null, updated_at timestamptz not null,
      deleted_at timestamptz)`);
    this.addSql('create index if not exists gofers_account on read.gofers (account_id, created_at)');
    this.addSql(`create table if not exists read.gofer_messages (
      id text primary key, gofer_id text not null, account_id text not null, chat_id text not null,
      role text not null, content text not null, kind text, pairing jsonb, pending_query boolean not null,
      response_constraints jsonb, reply_to text, attachment_ids jsonb not null,
      created_at timestamptz not null, position bigint)`);
    this.addSql(
      'create index if not exists gofer_messages_chat on read.gofer_messages (gofer_id, created_at, position)',
    );
    this.addSql(`create table if not exists read.gofer_attachments (
      id text primary key, gofer_id text not null, account_id text not null, kind text not null,
      name text not null, mime_type text not null, size bigint not null, width integer, height integer,
      storage_key text not null, rag_status text not null, knowledge text,
      created_at timestamptz not null, deleted_at timestamptz)`);
    this.addSql('create index if not exists gofer_attachments_gofer on read.gofer_attachments (gofer_id)');
  }
}

export const migrations: MigrationDef[] = [
  projectorMigration,
  oanEventMigration,
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
  appliedPositionsMigration,
  { name: 'read-0004-gofers', class: CreateGofersReadModels },
];

/**
 * Tables a replay empties before consuming from offset zero (invariant 3). Every read model belongs
 * here: one left out is replayed onto its old rows (inserts are `on conflict do nothing`), so a
 * corrupted or stale row would survive the rebuild.
 */
export const READ_TABLES = [
  'read.oan_event',
  'read.oan_account_seq',
  'read.accounts',
  'read.applied_positions',
  'read.gofers',
  'read.gofer_messages',
  'read.gofer_attachments',
];
