import { liveAttachments, openConversationsOf } from '../infra/store.ts';
import { runConversationCommand, type ConversationContext } from './context.ts';

/**
 * Deleting a Gofer cascades: closes every open conversation of a deleted Gofer and returns the storage keys
 * of the files that went with them (the caller deletes them, best effort). A closed conversation
 * appends nothing, so a redelivered GoferDeleted changes nothing.
 */
export async function closeConversationsOf(
  ctx: ConversationContext,
  goferId: string,
): Promise<{ closed: number; storageKeys: string[] }> {
  const storageKeys: string[] = [];
  let closed = 0;
  for (const id of await openConversationsOf(ctx.orm.em.fork(), goferId)) {
    let live: { id: string; storage_key: string }[] = [];
    const { appended } = await runConversationCommand(ctx, id, async (em, state) => {
      live = state.status === 'none' ? [] : await liveAttachments(em, state.id);
      const attachmentIds = live.map((a) => a.id);
      return { type: 'CloseForDeletedGofer', data: { goferId, attachmentIds } };
    });
    if (appended.length > 0) {
      storageKeys.push(...live.map((a) => a.storage_key));
      closed += 1;
    }
  }
  return { closed, storageKeys };
}
