import { Migration, type MigrationDef } from '@oan/db';

/**
 * ADR 0030: the runtimes context's write state. Runtimes are rows (their policy and its CAS
 * version); jobs are rows derived from `read.oan_event` by seq, one per (runtime, event), so an
 * envelope read twice makes one job and a rebuild from the event table makes the same ones.
 */
class CreateRuntimes extends Migration {
  override async up(): Promise<void> {
    this.addSql('create schema if not exists runtimes');
    this.addSql(`create table if not exists runtimes.runtimes (
      id uuid primary key,
      account_id text not null,
      name text not null,
      policy jsonb not null,
      version int not null,
      cursor_seq bigint not null,
      created_at timestamptz not null,
      unique (account_id, name))`);
    this.addSql(`create table if not exists runtimes.jobs (
      id uuid primary key,
      runtime_id uuid not null references runtimes.runtimes (id) on delete cascade,
      event_id uuid not null,
      seq bigint not null,
      type text not null,
      gofer_id text,
      state text not null,
      attempts int not null default 0,
      version int not null default 0,
      lease_owner text,
      lease_until timestamptz,
      progress jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (runtime_id, event_id))`);
    this.addSql('create index if not exists jobs_runtime_seq_idx on runtimes.jobs (runtime_id, seq)');
    // what a claim scans: the claimable jobs of one runtime in seq order, not its finished history
    this.addSql(`create index if not exists jobs_claimable_idx on runtimes.jobs (runtime_id, seq)
      where state in ('queued', 'leased')`);
    this.addSql(`create table if not exists runtimes.job_finishes (
      job_id uuid not null references runtimes.jobs (id) on delete cascade,
      version int not null,
      lease_owner text not null,
      outcome text not null,
      answer jsonb not null,
      primary key (job_id, version))`);
  }
}

/** What the wake sweep scans: the leases running out now, not every job of every runtime. */
class IndexLeaseExpiry extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists jobs_lease_until_idx on runtimes.jobs (lease_until)
      where state = 'leased'`);
  }
}

/**
 * ADR 0033: runtimes with an endpoint. The signing secret is kept to sign (as webhook secrets are)
 * and never shown again; health is a state and a count of consecutive failures, with the last few
 * failures for the owner to read; a job given back by its endpoint waits until `dispatch_after`.
 */
class AddEndpoints extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table runtimes.runtimes
      add column if not exists endpoint text,
      add column if not exists secret text,
      add column if not exists endpoint_state text,
      add column if not exists consecutive_failures int not null default 0,
      add column if not exists last_seen_at timestamptz,
      add column if not exists verified_at timestamptz`);
    this.addSql(`create index if not exists runtimes_dispatchable_idx on runtimes.runtimes (id)
      where endpoint_state in ('active', 'unhealthy')`);
    this.addSql('alter table runtimes.jobs add column if not exists dispatch_after timestamptz');
    this.addSql(`create table if not exists runtimes.endpoint_failures (
      id bigserial primary key,
      runtime_id uuid not null references runtimes.runtimes (id) on delete cascade,
      kind text not null,
      job_id uuid,
      status_code int,
      error text not null,
      at timestamptz not null)`);
    this.addSql(
      'create index if not exists endpoint_failures_runtime_idx on runtimes.endpoint_failures (runtime_id, id)',
    );
  }
}

/**
 * ADR 0032: supersession and takeover. A runtime remembers when a worker last claimed or heartbeat
 * (`worker_seen_at`, null until the first); a job handed to the owner keeps why (`owner_reason`). The
 * open jobs (what supersession and the takeover sweep look at) have an index of their own.
 */
class AddTakeover extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table runtimes.runtimes add column if not exists worker_seen_at timestamptz');
    this.addSql('alter table runtimes.jobs add column if not exists owner_reason text');
    this.addSql(`create index if not exists jobs_open_idx on runtimes.jobs (runtime_id, seq)
      where state in ('queued', 'leased', 'exhausted', 'owner')`);
  }
}

/**
 * ADR 0031: a `handled` finish with a `reply` is first recorded `pending` with the call it makes,
 * then carried out through the owning service, then `done` with its answer (`answer_text`, served
 * byte for byte). A job with a pending finish is never claimed.
 */
class PendingReplies extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table runtimes.job_finishes
      add column if not exists state text not null default 'done',
      add column if not exists reply jsonb,
      add column if not exists call jsonb,
      add column if not exists answer_text text,
      add column if not exists created_at timestamptz not null default now(),
      alter column answer drop not null`);
    this.addSql(`create index if not exists job_finishes_pending_idx on runtimes.job_finishes (created_at)
      where state = 'pending'`);
  }
}

export const runtimesMigrations: MigrationDef[] = [
  { name: 'runtimes-0001-runtimes', class: CreateRuntimes },
  { name: 'runtimes-0002-lease-expiry-index', class: IndexLeaseExpiry },
  { name: 'runtimes-0003-endpoints', class: AddEndpoints },
  { name: 'runtimes-0004-takeover', class: AddTakeover },
  { name: 'runtimes-0005-pending-replies', class: PendingReplies },
];
