import { credentialsMigration } from '@oan/auth';
import type { MigrationDef } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { createAvroValidator } from './avroValidator';

/** The auth event store (`auth.events`, `auth.outbox`); every event is checked against its Avro schema. */
export const createAuthStore = () => new EventStore('auth', createAvroValidator());

/** Schema `auth`, in order: the event store, then the credential view it projects into. */
export const authMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  credentialsMigration,
];
