import { goferStreamId, type GoferEvent } from '@oan/domain';
import { handleCommand } from '@oan/eventstore';
import { WRITE_SOURCE, type GoferContext } from '../src/commands/context.ts';
import { goferDecider } from '../src/domain/gofer.ts';

/**
 * Appends events another component would write (uploads, matching) straight to a Gofer's stream,
 * keyed by `accountId`, and remembers the write as the command handler does.
 */
export async function appendGoferEvents(
  ctx: GoferContext,
  goferId: string,
  accountId: string,
  events: GoferEvent[],
) {
  const result = await handleCommand(ctx.orm, ctx.store, goferStreamId(goferId), goferDecider, () => {
    const occurredAt = ctx.now().toISOString();
    return events.map((e) => ({ type: e.type, data: e.data, partitionKey: accountId, occurredAt }));
  });
  const last = result.appended.at(-1);
  if (last) await ctx.writes.remember(last.partitionKey, WRITE_SOURCE, last.position);
  return result;
}
