import { Migration, type MigrationDef } from '@oan/db';

/**
 * The agents context's read model (docs/agent-relay.md): the ConnectOnion relay's
 * directory, one row per address with its latest announcement and whether that socket is still up.
 */
class CreateAgentsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.agents (
      address text primary key, summary text not null, endpoints jsonb not null, profile jsonb,
      announce_ts bigint not null, connection_id text not null, online boolean not null,
      announced_at timestamptz not null, departed_at timestamptz)`);
    this.addSql('create index if not exists agents_online on read.agents (online, announced_at desc)');
  }
}

/** This read model's tables, in migration order. */
export const agentsTables: MigrationDef[] = [{ name: 'read-0010-agents', class: CreateAgentsReadModel }];
