import { ForbiddenError } from '../domain/errors.ts';
import { goferStreamId } from '@oan/domain';
import { goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

export interface PostUserMessageInput {
  accountId: string;
  goferId: string;
  content?: string;
  attachmentIds?: string[];
  /** False when no object-storage adapter is configured. */
  attachmentsEnabled: boolean;
  /** An internal caller's command id: the message is posted once however often it is sent. */
  commandId?: string | undefined;
}

/**
 * A chat message: validated against the Gofer's state and durably appended before the route answers
 * 202. The message is never echoed back as an event (the projector emits assistant turns only).
 */
export async function postUserMessage(
  ctx: GoferContext,
  input: PostUserMessageInput,
): Promise<{ messageId: string }> {
  if (!plausibleGoferId(input.goferId)) throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  const messageId = ctx.ids();
  await goferCommands(ctx)(
    goferStreamId(input.goferId),
    {
      type: 'PostUserMessage',
      data: {
        accountId: input.accountId,
        messageId,
        content: input.content ?? '',
        attachmentIds: input.attachmentIds ?? [],
        attachmentsEnabled: input.attachmentsEnabled,
      },
    },
    input.commandId === undefined ? {} : { commandId: input.commandId },
  );
  return { messageId };
}
