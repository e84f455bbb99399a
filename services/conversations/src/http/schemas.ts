import { base64urlByteLength, devicePublicKey, sealedEnvelope, X25519_KEY_BYTES } from '@oan/sealed';
import { z } from 'zod';
import { isLowOrderPoint } from '../infra/keyMaterial.ts';

/** A malformed id is answered like an unknown one (403 / 404), never with a 400 that tells them apart. */
export const conversationParams = z.object({ conversationId: z.string() });
export const messageParams = z.object({ conversationId: z.string(), messageId: z.string() });
export const attachmentParams = z.object({ conversationId: z.string(), attachmentId: z.string() });

/** History: `since` a decimal bigint string (exclusive), `limit` 1..200 (default 50); anything else is a 400. */
export const historyQuery = z.object({
  since: z
    .string()
    .regex(/^\d+$/, 'since must be a non-negative decimal integer (a changeSequence)')
    .transform((s) => BigInt(s))
    .default(0n),
  limit: z
    .string()
    .regex(/^\d+$/, 'limit must be an integer between 1 and 200')
    .transform(Number)
    .pipe(z.number().int().min(1).max(200))
    .default(50),
});

const MESSAGE_FIELDS = new Set(['content', 'sealed', 'attachmentIds', 'clientMessageId', 'allowMissing']);

/**
 * Sending a message; the content and attachment rules are the domain's (src/domain/conversation.ts),
 * the sealed envelope's shape @oan/sealed's (docs/sealed-messages.md). A sealed message's body may
 * carry no unknown field; a plain one's unknown fields are ignored, as protocol v1 clients expect.
 */
export const messageBody = z
  .looseObject({
    content: z.string().optional(),
    sealed: sealedEnvelope
      .optional()
      .describe('Extension: an oan-sealed-v1 envelope instead of content (docs/sealed-messages.md)'),
    attachmentIds: z.array(z.string().max(128)).optional(),
    clientMessageId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('Extension: the same clientMessageId with the same body answers the first message again'),
    allowMissing: z
      .boolean()
      .optional()
      .describe("Extension: a sealed message may leave out some of the other side's current keys"),
  })
  .superRefine((b, ctx) => {
    if (b.content !== undefined && b.sealed !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'content and sealed cannot both be sent', path: ['sealed'] });
    }
    const unknown = Object.keys(b).filter((k) => !MESSAGE_FIELDS.has(k));
    if (b.sealed !== undefined && unknown.length > 0) {
      ctx.addIssue({ code: 'custom', message: `Unknown fields beside sealed: ${unknown.join(', ')}` });
    }
  });

/** Uploading an attachment: options travel in the query string. */
const dimension = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a positive integer of at most 5 digits')
  .transform(Number)
  .pipe(z.number().int().min(1));
export const uploadQuery = z.object({
  kind: z.enum(['photo', 'document']).optional(),
  width: dimension.optional(),
  height: dimension.optional(),
});

/** `OanConversationAttachment`: never a storage key, owner, conversation, status or URL. */
export const attachment = z.object({
  attachmentId: z.string(),
  kind: z.enum(['photo', 'document']),
  name: z.string(),
  mimeType: z.string(),
  size: z.number(),
  width: z.number().optional(),
  height: z.number().optional(),
});
export type OanConversationAttachment = z.infer<typeof attachment>;

/** A revised message's state (docs/sealed-messages.md "Revisions"); absent on an unrevised message. */
export const revision = z.object({
  state: z.enum(['corrected', 'retracted']),
  /** Corrections so far. */
  count: z.number().int().min(0),
  at: z.string(),
});

/**
 * A conversation message (GET items and the POST answer). `sealed` (a sealed message's content, then
 * `content` is "") and `revision` are extensions, absent otherwise: a v1 client reads the same bytes.
 */
export const message = z.object({
  id: z.string(),
  senderUserId: z.string(),
  content: z.string(),
  sealed: sealedEnvelope.optional(),
  attachments: z.array(attachment),
  changeSequence: z.string(),
  createdAt: z.string(),
  revision: revision.optional(),
});
export type ConversationMessage = z.infer<typeof message>;

/**
 * A revision (docs/sealed-messages.md "Revisions"): `correct` with `content` (a plain message) or
 * `sealed` (a sealed one), `retract` with neither; which of the two a message takes is its own kind.
 */
export const reviseBody = z
  .strictObject({
    action: z.enum(['correct', 'retract']),
    clientMessageId: z.string().min(1).max(128),
    content: z.string().optional(),
    sealed: sealedEnvelope.optional(),
    allowMissing: z
      .boolean()
      .optional()
      .describe("A sealed correction may leave out some of the other side's current keys"),
  })
  .superRefine((b, ctx) => {
    if (b.action === 'retract' && (b.content !== undefined || b.sealed !== undefined)) {
      ctx.addIssue({ code: 'custom', message: 'retract takes neither content nor sealed' });
    }
    if (b.action === 'correct' && (b.content === undefined) === (b.sealed === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'correct takes content or sealed, exactly one' });
    }
  });

// ---- The key directory (extension, docs/sealed-messages.md) ----

/** A malformed keyId is a 400 (keyIds are the caller's own: nothing to probe). */
export const keyParams = z.object({ keyId: z.uuid() });

export const publishKeyBody = z.strictObject({
  publicKey: devicePublicKey.refine(
    (k) => base64urlByteLength(k) !== X25519_KEY_BYTES || !isLowOrderPoint(k),
    'publicKey is a low-order X25519 point (every shared secret with it is zero)',
  ),
});

export const deviceKey = z.object({
  keyId: z.string(),
  publicKey: z.string(),
  fingerprint: z.string(),
  publishedAt: z.string(),
});
export const keysResponse = z.object({ keys: z.array(deviceKey) });
export const conversationKeysResponse = z.object({
  keys: z.array(z.object({ accountId: z.string(), ...deviceKey.shape })),
});

export const uploadResponse = z.object({ attachment });
export const urlResponse = z.object({ url: z.string() });
