import { z } from 'zod';
import { sealedEnvelope } from '@oan/sealed';

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

/** Sending a message; the content and attachment rules are the domain's (src/domain/conversation.ts). */
export const messageBody = z.object({
  content: z.string().optional(),
  attachmentIds: z.array(z.string().max(128)).optional(),
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
  })
  .superRefine((b, ctx) => {
    if (b.action === 'retract' && (b.content !== undefined || b.sealed !== undefined)) {
      ctx.addIssue({ code: 'custom', message: 'retract takes neither content nor sealed' });
    }
    if (b.action === 'correct' && (b.content === undefined) === (b.sealed === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'correct takes content or sealed, exactly one' });
    }
  });

export const uploadResponse = z.object({ attachment });
export const urlResponse = z.object({ url: z.string() });
