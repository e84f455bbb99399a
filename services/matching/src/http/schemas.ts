import { z } from 'zod';

/** Ids are opaque strings (§0.4); a malformed one gets the answer of an unknown one (§6). */
const id = z.string().max(128);

export const threadParams = z.object({ id: z.string() });
export const requestParams = z.object({ requestId: z.string() });
/** §4.5 (24): a malformed attachment id is answered like an unknown one (404). */
export const counterpartAttachmentParams = z.object({ threadId: z.string(), attachmentId: z.string() });
/** §4.5 (24): `expiresAt` in epoch milliseconds. */
export const signedUrlResponse = z.object({ url: z.string(), expiresAt: z.number() });

/** A14: `limit` default 50, max 200; `offset` from 0. Anything else is a 400 VALIDATION_ERROR. */
export const messagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

/** §4.5 (23): `roleId` = the caller's Gofer in that thread. */
export const confirmBody = z.object({ roleId: id, accepted: z.boolean() });
/** §4.6 (25): `roleId` must be the caller's own Gofer. */
export const matchRequestBody = z.object({ threadId: id, roleId: id });
/** §4.6 (26). */
export const decisionBody = z.object({ accept: z.boolean() });

/** A14: simple and additive. */
export const threadItem = z.object({
  id: z.string(),
  status: z.enum(['awaiting_confirmation', 'active', 'session_ended', 'closed']),
  mode: z.enum(['confirm', 'auto']),
  createdAt: z.string(),
  participants: z.array(z.object({ roleId: z.string(), name: z.string(), isMine: z.boolean() })),
});
export const threadList = z.array(threadItem);

/** A14: the transcript, senders labelled by `roleId` (and `isMine` for the caller's side). */
export const threadMessages = z.array(
  z.object({
    id: z.string(),
    roleId: z.string(),
    isMine: z.boolean(),
    content: z.string(),
    createdAt: z.string(),
  }),
);

/** A15. */
export const confirmResponse = z.object({ ok: z.literal(true), threadId: z.string(), accepted: z.boolean() });

/** §4.6 (25) `MatchStatusResponse`. */
export const matchStatusResponse = z.object({
  status: z.enum(['none', 'outgoing_pending', 'incoming_pending', 'matched']),
  counterpart: z.object({ id: z.string(), name: z.string(), avatarUrl: z.string().nullable() }),
  pendingRequestId: z.string().nullable(),
  matchId: z.string().nullable(),
  conversationId: z.string().nullable(),
});

/** §4.6 (26); a decision yields `accepted` or `rejected` only (A25), null ids when rejected (A26). */
export const decisionResponse = z.object({
  ok: z.literal(true),
  status: z.enum(['pending', 'accepted', 'rejected', 'cancelled']),
  matchId: z.string().nullable(),
  conversationId: z.string().nullable(),
});
