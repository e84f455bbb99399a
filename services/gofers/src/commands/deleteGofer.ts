import { NotFoundError } from '../domain/errors.ts';
import { goferStreamId } from '@oan/domain';
import { clearA2APublished } from '../infra/a2aAgents.ts';
import { setRelayPublished } from '../infra/relayAgents.ts';
import { cancelOpenTasks } from './a2a.ts';
import { goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

/**
 * Deleting a Gofer is irreversible. Returns the storage keys of the Gofer's uploads so the caller can remove
 * the bytes best-effort after the commit (a storage failure never fails the deletion).
 */
export async function deleteGofer(
  ctx: GoferContext,
  input: { accountId: string; goferId: string },
): Promise<{ storageKeys: string[] }> {
  if (!plausibleGoferId(input.goferId)) throw new NotFoundError('GOFER_NOT_FOUND', 'Gofer not found');
  const { state } = await goferCommands(ctx)(
    goferStreamId(input.goferId),
    { type: 'DeleteGofer', data: { accountId: input.accountId } },
    // A deleted Gofer leaves the relay (the route then withdraws its announcement) and A2A.
    {
      inline: async (em) => {
        await setRelayPublished(em, input.goferId, false, ctx.now().toISOString());
        await clearA2APublished(em, input.goferId, ctx.now().toISOString());
      },
    },
  );
  if (state.status === 'none') return { storageKeys: [] };
  await cancelOpenTasks(ctx, input);
  return { storageKeys: [...state.attachments.values()].map((a) => a.storageKey) };
}
