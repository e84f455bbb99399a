import { Migration, type MigrationDef } from '@oan/db';

class CreateAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.accounts (
      id text primary key, email text, source_platform text not null, banned_at timestamptz,
      created_at timestamptz not null)`);
  }
}

/**
 * `read.accounts` had no reader: other contexts take an account's registration platform and ban from
 * the auth service's credential view (ADR 0006). Dropped, so nothing keeps a copy nobody reads.
 */
class DropAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop table if exists read.accounts');
  }
}

/** This read model's tables, in migration order (the first made `read.accounts`, the second drops it). */
export const accountsTables: MigrationDef[] = [
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
];
export const accountsDropped: MigrationDef = {
  name: 'read-0011-drop-accounts',
  class: DropAccountsReadModel,
};
