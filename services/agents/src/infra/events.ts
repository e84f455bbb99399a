import { sql, transaction, type MikroORM } from '@oan/db';
import { agentStreamId, type AgentAnnounced, type AgentDeparted, type AgentEvent } from '@oan/domain';
import { ConcurrencyError, EventStore } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

/** The agents event store (`agents.events`, `agents.outbox`), Avro-checked. */
export const createAgentStore = () =>
  new EventStore('agents', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * Appends one event to the agent's stream (keyed by its address: one partition orders an agent's
 * announcements and departures). Two replicas may append to one address at once (a reconnect lands
 * elsewhere while the old socket closes, an agent reconnecting in a loop): the appends of one address
 * take a transaction-scoped advisory lock on its stream first, so they queue instead of racing for the
 * same version (five immediate retries were not enough in CI: the announce failed, and its agent never
 * got ANNOUNCE_OK). A conflict is still retried, with a short jittered pause.
 */
export class AgentLog {
  private readonly orm: MikroORM;
  private readonly store: EventStore;
  constructor(orm: MikroORM, store: EventStore) {
    this.orm = orm;
    this.store = store;
  }

  announced(data: AgentAnnounced): Promise<void> {
    return this.append({ type: 'AgentAnnounced', data }, data.address, data.announcedAt);
  }

  departed(data: AgentDeparted): Promise<void> {
    return this.append({ type: 'AgentDeparted', data }, data.address, data.departedAt);
  }

  private async append(event: AgentEvent, address: string, occurredAt: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await transaction(this.orm, async (em) => {
          await sql(em, 'select pg_advisory_xact_lock(hashtext(?))', [agentStreamId(address)]);
          return this.store.append(em, [
            {
              streamId: agentStreamId(address),
              expectedVersion: 'any',
              events: [{ type: event.type, data: event.data, partitionKey: address, occurredAt }],
            },
          ]);
        });
        this.store.committed(this.orm);
        return;
      } catch (err) {
        if (!(err instanceof ConcurrencyError) || attempt >= 10) throw err;
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
      }
    }
  }
}
