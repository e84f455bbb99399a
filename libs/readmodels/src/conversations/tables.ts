import { Migration, type MigrationDef } from '@oan/db';

/**
 * The conversations context's read models: the post-match channels, their uploads and their
 * messages, queried by the conversations service's GET routes.
 */
class CreateConversationsReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.conversations (
      id text primary key, match_id text not null, thread_id text not null,
      account_a text not null, gofer_a text not null, account_b text not null, gofer_b text not null,
      status text not null, closed_reason text, opened_at timestamptz not null, closed_at timestamptz)`);
    this.addSql('create index if not exists conversations_account_a on read.conversations (account_a)');
    this.addSql('create index if not exists conversations_account_b on read.conversations (account_b)');
    this.addSql(`create table if not exists read.conversation_attachments (
      id text primary key, conversation_id text not null, uploader_account_id text not null,
      kind text not null, name text not null, mime_type text not null, size bigint not null,
      width integer, height integer, storage_key text not null, message_id text,
      created_at timestamptz not null, deleted_at timestamptz)`);
    this.addSql(
      'create index if not exists conversation_attachments_conversation on read.conversation_attachments (conversation_id)',
    );
    this.addSql(`create table if not exists read.conversation_messages (
      id text primary key, conversation_id text not null, sender_account_id text not null,
      recipient_account_id text not null, content text not null, attachment_ids jsonb not null,
      change_sequence bigint not null, created_at timestamptz not null, recalled_at timestamptz,
      unique (conversation_id, change_sequence))`);
  }
}

/**
 * Revisions (docs/sealed-messages.md): a message's sealed content, and the state of its last
 * revision (null: never revised, and history shows no `revision`).
 */
class AddConversationRevisions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table read.conversation_messages
      add column if not exists sealed jsonb,
      add column if not exists revision_state text,
      add column if not exists revision_count integer,
      add column if not exists revised_at timestamptz`);
  }
}

/** A sealed message's envelope (docs/sealed-messages.md), null for a plain message. */
class AddSealedMessages extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table read.conversation_messages add column if not exists sealed jsonb');
  }
}

/** This read model's tables, in migration order. */
export const conversationsTables: MigrationDef[] = [
  { name: 'read-0006-conversations', class: CreateConversationsReadModels },
  { name: 'read-0013-conversation-sealed-messages', class: AddSealedMessages },
];

/** Added after the others (their names are recorded in the projector's migrations; never renumber). */
export const conversationRevisionsTables: MigrationDef[] = [
  { name: 'read-0014-conversation-revisions', class: AddConversationRevisions },
];
