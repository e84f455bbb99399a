import type { EntityManager } from '@oan/db';
import type { OanEventType, OanMessageSource } from '@oan/protocol';

/**
 * What a read model's projection says to notify: an OAN envelope to one account, before the
 * projector gives it its id and seq.
 */
export interface NotificationSpec {
  recipient: string;
  type: OanEventType;
  source: OanMessageSource;
  goferId?: string;
  chatId?: string;
  threadId?: string;
  conversationId?: string;
  responseConstraints?: Record<string, unknown>;
  /** Relative to /api/v1 (emitted absolute, with the /api/v1 prefix). */
  reply?: string;
  webUrl?: string;
  payload: Record<string, unknown>;
  createdAt: string;
  /**
   * Set when one source event can yield this type more than once for one account (one per side of a
   * pair: `pair_proposed`, `match_decided`): without it the two would share an eventId and stage 2
   * would keep only the first. Deterministic (e.g. the recipient's goferId).
   */
  discriminator?: string;
}

/** A decoded domain event as the projector sees it; `data` is typed by its context's union. */
export interface DomainEvent<T extends string = string, D = Record<string, unknown>> {
  eventId: string;
  type: T;
  streamId: string;
  partitionKey: string;
  occurredAt: string;
  /** Position in the source event store (orders rows that share a timestamp). */
  position: bigint | null;
  data: D;
}

/** A context's event union (`GoferEvent`, `ThreadEvent`, …): each member names its type and data. */
export interface EventUnion {
  type: string;
  data: unknown;
}

/** The stored form of each event of a union, one `DomainEvent` per event type. */
export type StoredEvent<U extends EventUnion> = U extends { type: infer T extends string; data: infer D }
  ? DomainEvent<T, D>
  : never;

export interface ProjectionContext {
  webBaseUrl?: string;
}

/** Applies one event to the read models (idempotently) and returns the OAN notifications it yields. */
export type Apply<E> = (em: EntityManager, event: E, ctx: ProjectionContext) => Promise<NotificationSpec[]>;

/**
 * What a projection does with each event of its context: a handler, or `null` for an event that
 * changes no read model. The object must name every event type of the union, so a new event type
 * does not compile until someone decides where it goes.
 */
export type Handlers<U extends EventUnion> = {
  [K in U['type']]: Apply<StoredEvent<Extract<U, { type: K }>>> | null;
};

/**
 * One bounded context's projection as the pipeline runs it: updates its read models (idempotently:
 * applying an event twice changes nothing) and returns the OAN notifications the event yields.
 */
export interface Projection {
  handles: ReadonlySet<string>;
  apply: Apply<DomainEvent>;
}

/** A projection from a handler per event type of the union `U` (see `Handlers`). */
export function projection<U extends EventUnion>(handlers: Handlers<U>): Projection {
  const table = handlers as unknown as Record<string, Apply<DomainEvent> | null>;
  const handles = new Set(Object.keys(table).filter((type) => table[type] !== null));
  return {
    handles,
    apply: (em, event, ctx) => table[event.type]?.(em, event, ctx) ?? Promise.resolve([]),
  };
}
