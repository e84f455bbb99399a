import { z } from 'zod';

/** Ids are opaque strings; a malformed one gets the answer of an unknown one (same 403 or 404). */
const id = z.string().max(128);

export const threadParams = z.object({ id: z.string() });
export const requestParams = z.object({ requestId: z.string() });
/** Counterpart-attachment URL: a malformed attachment id is answered like an unknown one (404). */
export const counterpartAttachmentParams = z.object({ threadId: z.string(), attachmentId: z.string() });
/** The signed URL; `expiresAt` in epoch milliseconds (a number, unlike every other timestamp). */
export const signedUrlResponse = z.object({ url: z.string(), expiresAt: z.number() });

/** Transcript paging: `limit` default 50, max 200; `offset` from 0. Else a 400 VALIDATION_ERROR. */
export const messagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

/** The most threads one `GET /threads` answers (and its default): newest first, `offset` pages on. */
export const THREADS_PAGE_MAX = 500;

/** Thread list paging: `limit` default and max 500, `offset` from 0. Else a 400 VALIDATION_ERROR. */
export const threadsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(THREADS_PAGE_MAX).default(THREADS_PAGE_MAX),
  offset: z.coerce.number().int().min(0).default(0),
});

/** `POST /threads/:id/pair/confirm`: `roleId` = the caller's Gofer in that thread. */
export const confirmBody = z.object({ roleId: id, accepted: z.boolean() });
/** `POST /match-requests`: `roleId` must be the caller's own Gofer. */
export const matchRequestBody = z.object({ threadId: id, roleId: id });
/** `POST /match-requests/:requestId/decision`. */
export const decisionBody = z.object({ accept: z.boolean() });

/** The thread shape: unpublished by the spec and read by no shipped client, so simple and additive. */
export const threadItem = z.object({
  id: z.string(),
  status: z.enum(['awaiting_confirmation', 'active', 'session_ended', 'closed']),
  mode: z.enum(['confirm', 'auto']),
  createdAt: z.string(),
  participants: z.array(z.object({ roleId: z.string(), name: z.string(), isMine: z.boolean() })),
});
export const threadList = z.array(threadItem);

/** The transcript, senders labelled by `roleId` (and `isMine` for the caller's side). */
export const threadMessages = z.array(
  z.object({
    id: z.string(),
    roleId: z.string(),
    isMine: z.boolean(),
    content: z.string(),
    createdAt: z.string(),
  }),
);

/** The pair/confirm success body (clients ignore it; it only has to be JSON). */
export const confirmResponse = z.object({ ok: z.literal(true), threadId: z.string(), accepted: z.boolean() });

/** `MatchStatusResponse`, the answer of `POST /match-requests`. */
export const matchStatusResponse = z.object({
  status: z.enum(['none', 'outgoing_pending', 'incoming_pending', 'matched']),
  counterpart: z.object({ id: z.string(), name: z.string(), avatarUrl: z.string().nullable() }),
  pendingRequestId: z.string().nullable(),
  matchId: z.string().nullable(),
  conversationId: z.string().nullable(),
});

/**
 * The decision's answer. The enum stays wide, but a decision yields `accepted` or `rejected` only;
 * `matchId`/`conversationId` are null when rejected (no match or conversation exists).
 */
export const decisionResponse = z.object({
  ok: z.literal(true),
  status: z.enum(['pending', 'accepted', 'rejected', 'cancelled']),
  matchId: z.string().nullable(),
  conversationId: z.string().nullable(),
});
