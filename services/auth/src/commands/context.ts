import type { MikroORM } from '@oan/db';
import type { EventStore, NewEvent } from '@oan/eventstore';
import type { AuthEvent } from '@oan/domain';

/** What every command handler needs: the database, the auth event store and the clock. */
export interface AuthContext {
  orm: MikroORM;
  store: EventStore;
  now: () => Date;
}

/** Stamps domain events for the store; `accountId` is the Kafka key that orders them. */
export function toNewEvents(accountId: string, occurredAt: string, events: AuthEvent[]): NewEvent[] {
  return events.map((e) => ({ type: e.type, data: e.data, partitionKey: accountId, occurredAt }));
}
