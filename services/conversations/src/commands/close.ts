import { sql } from '@oan/db';
import { decideClose } from '../domain/conversation.ts';
import { liveAttachments } from '../infra/store.ts';
import { runConversationCommand, type ConversationContext } from './context.ts';

/**
 * §4.4 (15) cascades: closes every open conversation of a deleted Gofer and returns the storage keys
 * of the files that went with them (the caller deletes them, best effort). A closed conversation
 * appends nothing, so a redelivered GoferDeleted changes nothing.
 */
export async function closeConversationsOf(
  ctx: ConversationContext,
  goferId: string,
): Promise<{ closed: number; storageKeys: string[] }> {
  const rows = await sql<{ id: string }>(
    ctx.orm.em.fork(),
    `select id from conversations.conversations where (gofer_a = ? or gofer_b = ?) and status = 'open'`,
    [goferId, goferId],
  );
  const storageKeys: string[] = [];
  let closed = 0;
  for (const { id } of rows) {
    const appended = await runConversationCommand(ctx, id, async (em, conv, now) => {
      const live = conv ? await liveAttachments(em, conv.id) : [];
      const events = decideClose(
        conv,
        goferId,
        live.map((a) => a.id),
        now,
      );
      if (events.length > 0) storageKeys.push(...live.map((a) => a.storage_key));
      // Keyed like ConversationOpened (side a): the projector sees the close after the opening.
      return { accountId: conv?.accountA ?? '', events };
    });
    if (appended.length > 0) closed += 1;
  }
  return { closed, storageKeys };
}
