import { Migration, type MigrationDef } from '@oan/db';
import {
  appliedPositionsMigration,
  oanEventMigration,
  oanExpectedMigration,
  projectorMigration,
} from '@oan/projection';

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

/**
 * The matching context's read models (docs/adr/0012): threads with both sides' public snapshots,
 * their transcripts, one pairing card per side (§4.4 (18)(19)) and the match requests.
 */
class CreateMatchingReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.threads (
      id text primary key, mode text not null, status text not null,
      a_gofer_id text not null, a_account_id text not null, a_name text not null, a_source_platform text not null,
      a_confirmed_at timestamptz,
      b_gofer_id text not null, b_account_id text not null, b_name text not null, b_source_platform text not null,
      b_confirmed_at timestamptz,
      score double precision not null, turn_count integer not null default 0,
      closed_reason text, closed_by_gofer_id text, match_id text, conversation_id text,
      proposed_at timestamptz not null, activated_at timestamptz, session_ended_at timestamptz,
      closed_at timestamptz, created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql('create index if not exists threads_a_account on read.threads (a_account_id, created_at)');
    this.addSql('create index if not exists threads_b_account on read.threads (b_account_id, created_at)');
    this.addSql('create index if not exists threads_a_gofer on read.threads (a_gofer_id)');
    this.addSql('create index if not exists threads_b_gofer on read.threads (b_gofer_id)');
    this.addSql(`create table if not exists read.thread_messages (
      id text primary key, thread_id text not null, turn_index integer not null,
      sender_gofer_id text not null, content text not null, created_at timestamptz not null,
      unique (thread_id, turn_index))`);
    this.addSql(`create table if not exists read.pairing_cards (
      id text not null unique, thread_id text not null, gofer_id text not null, account_id text not null,
      role_name text not null, pairing_status text not null, dynamic_status text not null,
      paired_at timestamptz not null, updated_at timestamptz not null, card_title text, summary_preview text,
      opponent_gofer_id text not null, opponent_role_name text not null, opponent_source_platform text not null,
      opponent_user_name text, opponent_user_avatar_url text, opponent_profile_title text,
      opponent_profile_info_text text, cover_photo jsonb, photo_count integer not null default 0,
      card_version integer, card_message_id text, card_payload jsonb, card_generated_at timestamptz,
      primary key (thread_id, gofer_id))`);
    this.addSql(
      'create index if not exists pairing_cards_gofer on read.pairing_cards (gofer_id, paired_at desc, thread_id)',
    );
    this.addSql(`create table if not exists read.match_requests (
      id text primary key, thread_id text not null,
      requester_gofer_id text not null, requester_account_id text not null,
      recipient_gofer_id text not null, recipient_account_id text not null,
      status text not null, decided_by text, match_id text, conversation_id text,
      requested_at timestamptz not null, decided_at timestamptz, updated_at timestamptz not null)`);
    this.addSql('create index if not exists match_requests_thread on read.match_requests (thread_id)');
    this.addSql(
      'create index if not exists match_requests_recipient on read.match_requests (recipient_account_id, status)',
    );
  }
}

/**
 * The conversations context's read models (§4.7): the post-match channels, their uploads and their
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

/** The conversations service opens a conversation from its accepted match request (ADR 0013). */
class IndexMatchRequestsByConversation extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create index if not exists match_requests_conversation on read.match_requests (conversation_id) where conversation_id is not null',
    );
  }
}

export const migrations: MigrationDef[] = [
  projectorMigration,
  oanEventMigration,
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
  appliedPositionsMigration,
  { name: 'read-0004-gofers', class: CreateGofersReadModels },
  { name: 'read-0005-matching', class: CreateMatchingReadModels },
  { name: 'read-0006-conversations', class: CreateConversationsReadModels },
  { name: 'read-0007-match-requests-by-conversation', class: IndexMatchRequestsByConversation },
  oanExpectedMigration,
];
