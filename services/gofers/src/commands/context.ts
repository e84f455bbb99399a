import { sql, type EntityManager, type MikroORM } from '@oan/db';
import { handleCommand, type EventStore, type NewEvent, type StoredEvent } from '@oan/eventstore';
import type { WriteSource, WriteTracker } from '@oan/projection';
import { goferStreamId, type GoferEvent } from '@oan/domain';
import { ForbiddenError } from '../domain/errors.ts';
import { goferDecider } from '../domain/gofer.ts';
import type { GoferState } from '../domain/goferState.ts';

/** What every command handler needs. */
export interface GoferContext {
  orm: MikroORM;
  /** `EventStore('gofers', avroEventValidator(registry))` (src/infra/store.ts). */
  store: EventStore;
  /** Records each command's last position so the owner's next read waits for the projector. */
  writes: WriteTracker;
  now: () => Date;
  /** Fresh ids (randomUUID) for Gofers, chats and messages. */
  ids: () => string;
  /** OAN_WEB_BASE_URL without its trailing slash; `webUrl` is emitted only when set (§0.5, A29). */
  webBaseUrl?: string;
}

/** The read-your-writes source name of this event store (topic `gofers.events`). */
export const WRITE_SOURCE: WriteSource = 'gofers';

/** Stamps domain events for the store; `accountId` (the owner) is the Kafka key that orders them. */
export function toNewEvents(accountId: string, occurredAt: string, events: GoferEvent[]): NewEvent[] {
  return events.map((e) => ({ type: e.type, data: e.data, partitionKey: accountId, occurredAt }));
}

/**
 * load → fold → decide → append on the Gofer's stream, then remember the owner's last position
 * (invariant 4) so that the owner's next GET waits until the projector applied it.
 */
export async function runGoferCommand(
  ctx: GoferContext,
  goferId: string,
  decide: (state: GoferState, now: string) => { accountId: string; events: GoferEvent[] } | null,
  opts: {
    newStream?: boolean;
    /** Runs in the append's transaction (the relay keys' `published` flag, ADR 0023). */
    inline?: (em: EntityManager, appended: StoredEvent[], state: GoferState) => Promise<void>;
  } = {},
): Promise<{ state: GoferState; appended: StoredEvent[] }> {
  const result = await handleCommand(
    ctx.orm,
    ctx.store,
    goferStreamId(goferId),
    goferDecider,
    (state) => {
      const now = ctx.now().toISOString();
      const decided = decide(state, now);
      return decided ? toNewEvents(decided.accountId, now, decided.events) : [];
    },
    opts,
  );
  const last = result.appended.at(-1);
  if (last) await ctx.writes.remember(last.accountId, WRITE_SOURCE, last.position);
  return result;
}

/** `${OAN_WEB_BASE_URL}/gofers/<goferId>` when configured (A29), otherwise no key at all. */
export const goferWebUrl = (ctx: Pick<GoferContext, 'webBaseUrl'>, goferId: string) =>
  ctx.webBaseUrl ? { webUrl: `${ctx.webBaseUrl}/gofers/${encodeURIComponent(goferId)}` } : {};

/** A Gofer id that can exist (UUIDs); anything else is answered as unknown without a query. */
export const plausibleGoferId = (goferId: string) => /^[A-Za-z0-9_-]{1,128}$/.test(goferId);

/** Those of `goferIds` whose stream holds a `GoferDeleted` (the store knows before any read model). */
export async function deletedInStore(
  ctx: Pick<GoferContext, 'orm' | 'store'>,
  goferIds: string[],
): Promise<Set<string>> {
  if (goferIds.length === 0) return new Set();
  const rows = await sql<{ stream_id: string }>(
    ctx.orm.em.fork(),
    `select stream_id from "${ctx.store.schema}".events
      where stream_id in (?) and type = 'GoferDeleted'`,
    [goferIds.map(goferStreamId)],
  );
  const deleted = new Set(rows.map((r) => r.stream_id));
  return new Set(goferIds.filter((id) => deleted.has(goferStreamId(id))));
}

/**
 * For reads and uploads: refuses unknown, deleted and foreign Gofers with the one probe-safe 403
 * (§6). Asks the event store, not a read model, so it never lags behind the owner's own writes.
 */
export async function assertOwnsActiveGofer(
  ctx: Pick<GoferContext, 'orm' | 'store'>,
  accountId: string,
  goferId: string,
): Promise<void> {
  if (plausibleGoferId(goferId)) {
    const rows = await sql<{ type: string; account_id: string }>(
      ctx.orm.em.fork(),
      `select type, data->>'accountId' as account_id from "${ctx.store.schema}".events
        where stream_id = ? and type in ('GoferCreated', 'GoferDeleted')`,
      [goferStreamId(goferId)],
    );
    const created = rows.find((r) => r.type === 'GoferCreated');
    const deleted = rows.some((r) => r.type === 'GoferDeleted');
    if (created && created.account_id === accountId && !deleted) return;
  }
  throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
}
