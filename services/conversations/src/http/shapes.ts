import type { MessageAttachment } from '@oan/domain';
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
