import { sql, type MikroORM } from '@oan/db';
import { commandHandler, type CommandHandler, type EventStore } from '@oan/eventstore';
import type { WriteSource, WriteTracker } from '@oan/projection';
import { goferStreamId } from '@oan/domain';
import { ForbiddenError } from '../domain/errors.ts';
import { goferDecider, type GoferCommand } from '../domain/gofer.ts';
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
  /** OAN_WEB_BASE_URL without its trailing slash; `webUrl` is emitted only when set (else no key). */
  webBaseUrl?: string;
}

/** The read-your-writes source name of this event store (topic `gofers.events`). */
export const WRITE_SOURCE: WriteSource = 'gofers';

/**
 * The Gofer aggregate's command handler: load → fold → decide → append on `gofer-<goferId>`, keyed
 * by the owner's account (every Gofer event names it), then the owner's last position is
 * remembered so that the owner's next GET waits until the projector applied it.
 */
export const goferCommands = (ctx: GoferContext): CommandHandler<GoferState, GoferCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    decider: goferDecider,
    now: ctx.now,
    partitionKey: (_state, events) => events[0]!.data.accountId,
    remember: (last) => ctx.writes.remember(last.partitionKey, WRITE_SOURCE, last.position),
  });

/** `${OAN_WEB_BASE_URL}/gofers/<goferId>` when configured, otherwise no key at all. */
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
 * (a probe cannot tell them apart). Asks the event store, not a read model, so it never lags
 * behind the owner's own writes.
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
