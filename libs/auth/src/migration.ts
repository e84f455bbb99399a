import { Migration, type MigrationDef } from '@oan/db';

/**
 * The credential view (`auth.accounts`, `auth.api_keys`): inline tables the auth service updates in
 * the same transaction as its event appends, and that every process reads synchronously so that a
 * revocation or a ban is effective at once.
 */
class CreateCredentials extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists auth.accounts (
      id text primary key,
      realm text not null default 'oan',
      email text,
      google_sub text,
      source_platform text not null,
      banned_at timestamptz,
      created_at timestamptz not null)`);
    // one account per email and realm, case-insensitively.
    this.addSql(
      'create unique index if not exists accounts_realm_email_uq on auth.accounts (realm, lower(email))',
    );
    this.addSql(`create table if not exists auth.api_keys (
      id uuid primary key,
      account_id text not null,
      key_hash text not null unique,
      name text not null,
      permissions text[] not null,
      created_at timestamptz not null,
      last_used_at timestamptz,
      expires_at timestamptz)`);
    this.addSql('create index if not exists api_keys_account_id_idx on auth.api_keys (account_id)');
  }
}

export const credentialsMigration: MigrationDef = { name: 'auth-0001-credentials', class: CreateCredentials };
