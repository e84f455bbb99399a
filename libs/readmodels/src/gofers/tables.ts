import { Migration, type MigrationDef } from '@oan/db';

/** The gofers context's read models: the Gofer list, role-chat history and attachments. */
class CreateGofersReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.gofers (
      id text primary key, account_id text not null, chat_id text not null, name text not null,
      description text not null, locale text not null, source_platform text not null,
      discovery_status text not null, human_review_triggers jsonb not null, "values" jsonb not null,
      demands jsonb not null, created_at timestamptz not null, updated_at timestamptz not null,
      deleted_at timestamptz)`);
    this.addSql('create index if not exists gofers_account on read.gofers (account_id, created_at)');
    // Discovery's candidate filter (services/matching reactors/discovery.ts): ready, not deleted.
    this.addSql(`create index if not exists gofers_ready_for_discovery on read.gofers (id)
      where discovery_status = 'ready_for_pairing' and deleted_at is null`);
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

/** This read model's tables, in migration order. */
export const gofersTables: MigrationDef[] = [{ name: 'read-0004-gofers', class: CreateGofersReadModels }];
