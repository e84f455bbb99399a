import { Migration, type MigrationDef } from '@oan/db';
import { commandIdsMigration, EventStore } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { a2aPushMigration } from '../a2a/push/migration.ts';
import { CreateRelayOwnerAnswers } from './relayOwnerAnswers.ts';
import { A2A_DECIDING_TYPES, DECIDING_TYPES } from './relayView.ts';

/** The gofers event store (`gofers.events`, `gofers.outbox`); every event is checked against its Avro schema. */
export const createGoferStore = () =>
  new EventStore('gofers', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * ADR 0023: each Gofer's ConnectOnion relay key, sealed (src/relay/keys.ts), and whether
 * the Gofer is published now. Written in the transaction of the event that decides it (an inline
 * projection of the write side); the key never enters an event, a log or a read model.
 */
class CreateRelayAgents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists gofers.relay_agents (
      gofer_id text primary key, account_id text not null, address text not null unique,
      sealed_key text not null, published boolean not null default false,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(
      'create index if not exists relay_agents_published on gofers.relay_agents (gofer_id) where published',
    );
  }
}

/**
 * A relay turn reads the newest event of each type that decides it (src/infra/relayView.ts), not
 * the Gofer's whole stream: this index holds those few types only, so the read stays small however
 * long the role-chat grows.
 */
class IndexRelayDeciding extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists events_relay_deciding on gofers.events (stream_id, type, stream_version)
        where type in ${DECIDING_TYPES}`,
    );
  }
}

/**
 * The owner-answers reactor reads every owner message; only a Gofer that was ever asked for a caller
 * needs its stream folded (src/reactors/ownerAnswers.ts). This index answers "ever asked" with one
 * probe, however long the role-chat.
 */
class IndexCallerQuestions extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists events_caller_questions on gofers.events (stream_id)
        where type = 'CallerQuestionAsked'`,
    );
  }
}

/**
 * ADR 0035: which Gofers are reachable as A2A agents (`a2a_agents`, written with the event that
 * decides it) and their A2A tasks as they stand (`a2a_tasks`, written with each `A2ATaskSaved`):
 * the callers' reads are consistent with the writes, while `read.a2a_tasks` is the log's view.
 */
class CreateA2ATables extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists gofers.a2a_agents (
      gofer_id text primary key, account_id text not null, published boolean not null,
      updated_at timestamptz not null)`);
    this.addSql(`create table if not exists gofers.a2a_tasks (
      task_id text primary key, gofer_id text not null, caller_id text not null, context_id text not null,
      state text not null, task jsonb not null, updated_at timestamptz not null)`);
    this.addSql(`create index if not exists a2a_tasks_caller
      on gofers.a2a_tasks (gofer_id, caller_id, updated_at desc, task_id)`);
    // An A2A turn reads the newest event of each type that decides it, as a relay turn does.
    this.addSql(
      `create index if not exists events_a2a_deciding on gofers.events (stream_id, type, stream_version)
        where type in ${A2A_DECIDING_TYPES}`,
    );
  }
}

/**
 * The reply of each A2A turn recorded in the owner's role-chat, written in the transaction that
 * records it (`recordA2ATurn`): after a crash between the record and the task's completion, the
 * recovery sweep (src/a2a/recovery.ts) completes the task with exactly the reply the owner saw. The
 * role-chat row quotes the reply cut to a length, so it cannot serve.
 */
class CreateA2ATurnReplies extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists gofers.a2a_turn_replies (
      task_id text not null, turn int not null, reply text not null, recorded_at timestamptz not null,
      primary key (task_id, turn))`);
  }
}

/**
 * Schema `gofers`: the event store, the relay keys of published Gofers, the owners' answers kept for
 * relay callers, and the A2A push configs and their delivery queue (src/a2a/push). The read models
 * (`read.gofers`, `read.gofer_messages`, `read.gofer_attachments`) belong to the projector, which
 * creates and fills them.
 */
export const goferMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  commandIdsMigration(store),
  { name: 'gofers-0001-relay-agents', class: CreateRelayAgents },
  { name: 'gofers-0002-relay-deciding-index', class: IndexRelayDeciding },
  { name: 'gofers-0003-relay-owner-answers', class: CreateRelayOwnerAnswers },
  { name: 'gofers-0004-caller-questions-index', class: IndexCallerQuestions },
  { name: 'gofers-0005-a2a', class: CreateA2ATables },
  a2aPushMigration,
  { name: 'gofers-0007-a2a-turn-replies', class: CreateA2ATurnReplies },
];
