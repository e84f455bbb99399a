import type { ConversationMessageSent, SealedContent } from '@oan/domain';
import { ConflictError, RejectedError } from './errors.ts';

/**
 * The server's checks of a sealed message (docs/sealed-messages.md), against the key directory as
 * it stands in the send's transaction, and the retry rule of `clientMessageId`. The shape (sizes,
 * base64url) is checked before, by the route's schema (`sealedEnvelope` of @oan/sealed); nothing
 * here opens anything.
 */

/** A current device key of one side of the conversation. */
export interface CurrentKey {
  accountId: string;
  keyId: string;
}

/**
 * Every recipient names a current key of one of the two sides, once (else 400); the receiving side
 * has a key (else 409, so an account without keys never receives a sealed message); every current key
 * of the receiving side is a recipient unless `allowMissing` (else 409: read the keys again, seal again).
 */
export function checkSealedRecipients(
  sealed: SealedContent,
  keys: readonly CurrentKey[],
  sides: { sender: string; recipient: string },
  allowMissing: boolean,
): void {
  const id = (k: CurrentKey) => `${k.accountId}\u0000${k.keyId}`;
  const current = new Set(
    keys.filter((k) => k.accountId === sides.sender || k.accountId === sides.recipient).map(id),
  );
  const named = new Set<string>();
  for (const r of sealed.recipients) {
    const key = id(r);
    if (!current.has(key) || named.has(key)) {
      throw new RejectedError(
        'SEALED_RECIPIENT_UNKNOWN',
        `Recipient key ${r.keyId} of ${r.accountId} is not a current key of this conversation, or is named twice`,
      );
    }
    named.add(key);
  }
  const theirs = keys.filter((k) => k.accountId === sides.recipient);
  if (theirs.length === 0)
    throw new ConflictError('RECIPIENT_HAS_NO_KEY', 'The other side has no device key: send a plain message');
  const missing = theirs.filter((k) => !named.has(id(k)));
  if (missing.length > 0 && !allowMissing) {
    throw new ConflictError(
      'SEALED_RECIPIENTS_MISSING',
      `Sealed for ${theirs.length - missing.length} of the other side's ${theirs.length} current keys: read the keys again and seal again`,
    );
  }
}

/** What a send says about its message: the content or sealed content, and the files, in order. */
export interface SendBody {
  content?: string | undefined;
  sealed?: SealedContent | undefined;
  attachmentIds?: string[] | undefined;
}

/** The text a message stores: "" when blank (an attachment-only message) or sealed. */
export const storedContent = (body: SendBody): string =>
  body.sealed !== undefined || (body.content ?? '').trim() === '' ? '' : (body.content ?? '');

/**
 * Whether a send under a `clientMessageId` already used repeats the message it made: the same
 * content (as stored) or the same sealed content, and the same attachments in the same order.
 * `allowMissing` is not part of the message (it only relaxed a check the first send passed).
 */
export function sameSend(previous: ConversationMessageSent, body: SendBody): boolean {
  const sealed = previous.sealed ?? null;
  if ((sealed === null) !== (body.sealed === undefined)) return false;
  if (sealed !== null && body.sealed !== undefined && !sameSealed(sealed, body.sealed)) return false;
  if (previous.content !== storedContent(body)) return false;
  const ids = body.attachmentIds ?? [];
  return (
    previous.attachments.length === ids.length &&
    previous.attachments.every((a, i) => a.attachmentId === ids[i])
  );
}

/** The same envelope, field by field (a retried send or correction carries the same bytes). */
export function sameSealed(a: SealedContent, b: SealedContent): boolean {
  return (
    a.alg === b.alg &&
    a.ephemeralKey === b.ephemeralKey &&
    a.nonce === b.nonce &&
    a.ciphertext === b.ciphertext &&
    a.recipients.length === b.recipients.length &&
    a.recipients.every((r, i) => {
      const s = b.recipients[i];
      return (
        s !== undefined &&
        r.accountId === s.accountId &&
        r.keyId === s.keyId &&
        r.nonce === s.nonce &&
        r.wrappedKey === s.wrappedKey
      );
    })
  );
}

/** The refusal of a `clientMessageId` used before for another message. */
export const clientMessageIdReused = () =>
  new ConflictError(
    'CLIENT_MESSAGE_ID_REUSED',
    'This clientMessageId was already used for another message in this conversation',
  );
