import { transaction, type MikroORM } from '@oan/db';
import { agentStreamId, type AgentAnnounced, type AgentDeparted, type AgentEvent } from '@oan/domain';
import { ConcurrencyError, EventStore } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

/** The agents event store (`agents.events`, `agents.outbox`), Avro-checked. */
export const createAgentStore = () =>
  new EventStore('agents', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * Appends one event to the agent's stream (keyed by its address: one partition orders an agent's
 * announcements and departures). Two replicas may append to one address at once (a reconnect lands
 * elsewhere while the old socket closes): a version conflict is simply retried.
 */
export class AgentLog {
  constructor(
    private readonly orm: MikroORM,
    private readonly store: EventStore,
  ) {}

  announced(data: AgentAnnounced): Promise<void> {
    return this.append({ type: 'AgentAnnounced', data }, data.address, data.announcedAt);
  }

  departed(data: AgentDeparted): Promise<void> {
    return this.append({ type: 'AgentDeparted', data }, data.address, data.departedAt);
  }

  private async append(event: AgentEvent, address: string, occurredAt: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await transaction(this.orm, (em) =>
          this.store.append(em, [
            {
              streamId: agentStreamId(address),
              expectedVersion: 'any',
              events: [{ type: event.type, data: event.data, accountId: address, occurredAt }],
            },
          ]),
        );
        this.store.committed(this.orm);
        return;
      } catch (err) {
        if (!(err instanceof ConcurrencyError) || attempt >= 5) throw err;
      }
    }
  }
}
