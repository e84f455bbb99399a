import type { MessageAttachment, SealedContent } from '@oan/domain';
import type { OanConversationAttachment } from './schemas.ts';

/** The frozen attachment shape, width/height only on photos that have them. */
export function toOanAttachment(a: MessageAttachment): OanConversationAttachment {
  return {
    attachmentId: a.attachmentId,
    kind: a.kind,
    name: a.name,
    mimeType: a.mimeType,
    size: Number(a.size),
    ...(a.kind === 'photo' && a.width !== null ? { width: a.width } : {}),
    ...(a.kind === 'photo' && a.height !== null ? { height: a.height } : {}),
  };
}

/**
 * The `sealed` key of a message as the history and the POST answer show it: present only on a sealed
 * message, so a plain message's bytes are what v1 always sent. (The response schema re-checks the
 * envelope, whose `alg` it knows to be the one accepted.)
 */
export const sealedOf = (sealed: SealedContent | null | undefined): { sealed?: SealedContent } =>
  sealed ? { sealed: sealed } : {};
