import { Migration, type MigrationDef } from '@oan/db';

/**
 * The matching context's read models (docs/adr/0012): threads with both sides' public snapshots,
 * their transcripts, one pairing card per side (what a Gofer's pairings list shows) and the match requests.
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

/** The conversations service opens a conversation from its accepted match request (ADR 0013). */
class IndexMatchRequestsByConversation extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create index if not exists match_requests_conversation on read.match_requests (conversation_id) where conversation_id is not null',
    );
  }
}

/** This read model's tables, in migration order. */
export const matchingTables: MigrationDef[] = [
  { name: 'read-0005-matching', class: CreateMatchingReadModels },
  { name: 'read-0007-match-requests-by-conversation', class: IndexMatchRequestsByConversation },
];
