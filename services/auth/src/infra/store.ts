import { credentialsMigration } from '@oan/auth';
import type { MigrationDef } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { webhooksMigration } from './webhookStore.ts';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

/** The auth event store (`auth.events`, `auth.outbox`); every event is checked against its Avro schema. */
export const createAuthStore = () =>
  new EventStore('auth', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/** Schema `auth`, in order: the event store, then the credential view it projects into. */
export const authMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  credentialsMigration,
  webhooksMigration,
];
