import type { MigrationDef } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

/** The gofers event store (`gofers.events`, `gofers.outbox`); every event is checked against its Avro schema. */
export const createGoferStore = () =>
  new EventStore('gofers', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * Schema `gofers`: only the event store. The read models (`read.gofers`, `read.gofer_messages`,
 * `read.gofer_attachments`) belong to the projector, which creates and fills them.
 */
export const goferMigrations = (store: EventStore): MigrationDef[] => [store.migration()];
