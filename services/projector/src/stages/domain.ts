import { discardInserts, holdInserts, releaseInserts, type EntityManager } from '@oan/db';
import { toNotification, type Notification } from '../notifications.ts';
import type { DomainEvent, Projection, ProjectionContext } from '@oan/readmodels';

/**
 * Stage 1: applies a batch of domain events to the read models (inside the batch's transaction) and
 * returns the notifications they yield, in order. Projections are idempotent, and notification ids
 * are deterministic, so a redelivered batch changes nothing and its notifications dedup in stage 2.
 * `notify: false` (replay: the notifications are on `oan.events` already) applies the read models and
 * builds no notification.
 */
export async function projectDomainEvents(
  em: EntityManager,
  events: DomainEvent[],
  projections: Projection[],
  ctx: ProjectionContext,
  { notify = true }: { notify?: boolean } = {},
): Promise<Notification[]> {
  const out: Notification[] = [];
  // The batch's plain inserts (a Gofer, a role-chat turn) go as one statement per table, written
  // before any other statement of the batch reads or writes (ADR 0045).
  holdInserts(em);
  try {
    for (const event of events) {
      for (const p of projections) {
        if (!p.handles.has(event.type)) continue;
        const specs = await p.apply(em, event, ctx);
        if (notify) for (const spec of specs) out.push(toNotification(event.eventId, spec));
      }
    }
    await releaseInserts(em);
  } catch (err) {
    discardInserts(em);
    throw err;
  }
  return out;
}
