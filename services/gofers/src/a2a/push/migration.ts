import { Migration, type MigrationDef } from '@oan/db';

/**
 * A2A push notifications: the configs a caller registered on its tasks (`a2a_push_configs`, at most
 * a few per task and caller) and the notifications waiting to be delivered to them
 * (`a2a_push_deliveries`, one row per event and config, delivered in `id` order per task and config).
 * The token stays in the config row only: a delivery reads it when it is sent, so a deleted config
 * stops its deliveries at once.
 */
class CreateA2APushTables extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists gofers.a2a_push_configs (
      task_id text not null, caller_id text not null, config_id text not null,
      url text not null, token text not null default '', authentication jsonb,
      wire_version text not null, created_at timestamptz not null,
      primary key (task_id, caller_id, config_id))`);
    this.addSql(`create table if not exists gofers.a2a_push_deliveries (
      id bigserial primary key, task_id text not null, caller_id text not null, config_id text not null,
      body text not null, content_type text not null,
      attempts int not null default 0, next_at timestamptz not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
      last_error text, lease_id uuid, lease_until timestamptz, created_at timestamptz not null)`);
    // The heads of the queues (the oldest pending row per task and config) are found through this.
    this.addSql(`create index if not exists a2a_push_deliveries_pending
      on gofers.a2a_push_deliveries (task_id, caller_id, config_id, id) where state = 'pending'`);
    this.addSql(`create index if not exists a2a_push_deliveries_done
      on gofers.a2a_push_deliveries (created_at) where state <> 'pending'`);
  }
}

/** After the A2A tables of the core (`gofers-0005-a2a`); it refers to none of them. */
export const a2aPushMigration: MigrationDef = {
  name: 'gofers-0006-a2a-push-configs-and-deliveries',
  class: CreateA2APushTables,
};
