import { randomUUID } from 'node:crypto';
import { SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import type { DomainEvent, EventUnion, StoredEvent } from '@oan/readmodels';

/** The data of event type `K` of the union `U`. */
export type DataOf<U extends EventUnion, K extends U['type']> = Extract<U, { type: K }>['data'];

/** The stored event of type `K` of the union `U`, as the projector receives it. */
export type EventOf<U extends EventUnion, K extends U['type']> = StoredEvent<Extract<U, { type: K }>>;

/** One builder per event type of `U`: its defaults, the data overrides, then the envelope's. */
export type EventBuilders<U extends EventUnion> = {
  [K in U['type']]: (
    overrides?: Partial<DataOf<U, K>>,
    envelope?: Partial<Omit<DomainEvent, 'type' | 'data'>>,
  ) => EventOf<U, K>;
};

/** What every builder of a context needs besides the data: its stream and its partition key. */
export type EnvelopeOf<U extends EventUnion> = (
  event: { [K in U['type']]: { type: K; data: DataOf<U, K> } }[U['type']],
) => { streamId: string; partitionKey: string };

export const T0 = '2026-11-29T09:00:00.000Z';
/** `T0` plus `s` seconds, as the events write times. */
export const at = (s: number): string => new Date(Date.parse(T0) + s * 1000).toISOString();

let position = 0n;
const registry = new SchemaRegistry(SCHEMAS_DIR);

/** The data as a consumer reads it: through the type's Avro schema, so a field it lacks fails here. */
function throughAvro(type: string, data: unknown): unknown {
  const { value } = registry.encode(type, data);
  return registry.decode(type, registry.latestVersion(type), value);
}

/**
 * Typed builders of a context's events: `defaults` names every event type of the union (so a new
 * event does not compile here until it has defaults), each builder gives a fresh eventId and the
 * next source position, as the event store would, and passes the data through its Avro schema.
 */
export function eventBuilders<U extends EventUnion>(
  defaults: { [K in U['type']]: () => DataOf<U, K> },
  envelopeOf: EnvelopeOf<U>,
): EventBuilders<U> {
  const out: Record<string, unknown> = {};
  for (const type of Object.keys(defaults) as U['type'][]) {
    out[type] = (overrides: object = {}, envelope: Partial<DomainEvent> = {}) => {
      const data = { ...(defaults[type]() as object), ...overrides } as DataOf<U, typeof type>;
      return {
        eventId: randomUUID(),
        type,
        ...envelopeOf({ type, data }),
        occurredAt: T0,
        position: ++position,
        data: throughAvro(type, data),
        ...envelope,
      };
    };
  }
  return out as EventBuilders<U>;
}
