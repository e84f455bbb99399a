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

/**
 * Sending a message; the content and attachment rules are the domain's (src/domain/conversation.ts),
 * the sealed envelope's shape @oan/sealed's (docs/sealed-messages.md). Unknown fields are refused.
 */
export const messageBody = z
  .strictObject({
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
  .refine((b) => b.content === undefined || b.sealed === undefined, {
    message: 'content and sealed cannot both be sent',
    path: ['sealed'],
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

/** A conversation message (GET items and the POST answer); `sealed` only on a sealed one (content ""). */
export const message = z.object({
  id: z.string(),
  senderUserId: z.string(),
  content: z.string(),
  attachments: z.array(attachment),
  changeSequence: z.string(),
  createdAt: z.string(),
  sealed: sealedEnvelope.optional(),
});
export type ConversationMessage = z.infer<typeof message>;

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
