import { z } from 'zod';

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

/** A conversation message (GET items and the POST answer). */
export const message = z.object({
  id: z.string(),
  senderUserId: z.string(),
  content: z.string(),
  attachments: z.array(attachment),
  changeSequence: z.string(),
  createdAt: z.string(),
});
export type ConversationMessage = z.infer<typeof message>;

export const uploadResponse = z.object({ attachment });
export const urlResponse = z.object({ url: z.string() });
