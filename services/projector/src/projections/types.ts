import type { EntityManager } from '@oan/db';
import type { NotificationSpec } from '../notifications';

/** A decoded domain event as the projector sees it. */
export interface DomainEvent {
  eventId: string;
  type: string;
  streamId: string;
  accountId: string;
  occurredAt: string;
  /** Position in the source event store (orders rows that share a timestamp). */
  position: bigint | null;
  data: Record<string, unknown>;
}

export interface ProjectionContext {
  webBaseUrl?: string;
}

/**
 * One bounded context's projection: updates its read models (idempotently: applying an event twice
 * changes nothing) and returns the OAN notifications the event yields.
 */
export interface Projection {
  handles: ReadonlySet<string>;
  apply(em: EntityManager, event: DomainEvent, ctx: ProjectionContext): Promise<NotificationSpec[]>;
}
