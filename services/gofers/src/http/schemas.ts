import { z } from 'zod';

/** Postgres text and jsonb refuse NUL; refuse it at the edge instead of failing later. */
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

/**
 * Creating a Gofer: wrong types are a 400; keys the SDK never sends (e.g. `sourcePlatform`, which is never
 * read from the body) are ignored. The SDK always sends an object; a missing body counts as `{}`.
 */
export const createGoferBody = z
  .object({
    locale: text(64).optional(),
    humanReviewTriggers: z.array(text(500)).max(50).optional(),
  })
  .nullish();

/** No format rule: a malformed id gets the same answer as an unknown one (the probe-safe 403). */
export const goferParams = z.object({ goferId: z.string() });

/** A chat message: the shape only; the either-or and attachment rules are the decider's (all 400). */
export const chatMessageBody = z
  .object({
    content: text(20_000).optional(),
    attachmentIds: z.array(z.string().max(128)).max(10).optional(),
  })
  .nullish();

/** The chat history: `since` is never a reason to refuse (an unparseable one means "no since"). */
export const chatHistoryQuery = z.object({ since: z.union([z.string(), z.array(z.string())]).optional() });

const discoveryStatus = z.enum(['in_discovery', 'ready_for_pairing']);

export const createGoferResponse = z.object({
  goferId: z.string(),
  chatId: z.string(),
  greeting: z.string(),
  webUrl: z.string().optional(),
});

export const goferList = z.array(
  z.object({
    goferId: z.string(),
    name: z.string(),
    description: z.string(),
    discoveryStatus,
    createdAt: z.string(),
    webUrl: z.string().optional(),
  }),
);

export const deletedResponse = z.object({ deleted: z.literal(true), goferId: z.string() });

/** Publishing takes no fields; a body, if sent, must be a JSON object (as on every route); none counts as `{}`. */
export const relayPublishBody = z.object({}).nullish();

/** The Gofer's ConnectOnion relay address (`0x` + 64 hex), what a client `connect()`s to. */
export const relayPublished = z.object({
  goferId: z.string(),
  published: z.literal(true),
  address: z.string(),
});
export const relayUnpublished = z.object({ goferId: z.string(), published: z.literal(false) });
/** ADR 0035: where A2A clients find the Gofer's agent card. */
export const a2aPublished = z.object({
  goferId: z.string(),
  published: z.literal(true),
  agentCardUrl: z.string(),
});
export const a2aUnpublished = z.object({ goferId: z.string(), published: z.literal(false) });
export const acceptedResponse = z.object({ accepted: z.literal(true) });

const roleRef = z.object({ roleId: z.string(), name: z.string() });

/** The sanitized history item: no storage keys, URLs, snapshots or bookkeeping. */
export const chatMessage = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant', 'system']),
  content: z.string(),
  createdAt: z.string(),
  attachments: z
    .array(
      z.object({
        id: z.string(),
        kind: z.enum(['photo', 'document']),
        name: z.string(),
        mimeType: z.string(),
        size: z.number(),
        ragStatus: z.enum(['processing', 'ready', 'failed', 'unsupported']).optional(),
      }),
    )
    .optional(),
  kind: z.literal('pairing').optional(),
  pairing: z.object({ threadId: z.string(), self: roleRef, counterpart: roleRef }).optional(),
});
export type ChatMessageItem = z.infer<typeof chatMessage>;
export const chatHistory = z.array(chatMessage);

/** The pairing list: `limit` 1–100, default 50; anything else is a 400 VALIDATION_ERROR (no cursor in v1). */
export const pairingsQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });
/** No format rule: a malformed thread id is a thread without a card (404). */
export const pairingParams = z.object({ goferId: z.string(), threadId: z.string() });

/** One pairing in the list: the whitelisted `PairingSummaryCard`, exactly these keys. */
export const pairingSummaryCard = z.object({
  id: z.string(),
  threadId: z.string(),
  roleId: z.string(),
  roleName: z.string(),
  pairingStatus: z.string(),
  dynamicStatus: z.string(),
  pairedAt: z.string(),
  updatedAt: z.string(),
  cardTitle: z.string().nullable(),
  summaryPreview: z.string().nullable(),
  opponentRoleName: z.string(),
  opponentUserName: z.string().nullable(),
  opponentUserAvatarUrl: z.string().nullable(),
  opponentProfileTitle: z.string().nullable(),
  opponentProfileInfoText: z.string().nullable(),
  coverPhoto: z.record(z.string(), z.unknown()).nullable(),
  photoCount: z.number(),
});
export type PairingSummaryCard = z.infer<typeof pairingSummaryCard>;
export const pairingList = z.object({ items: z.array(pairingSummaryCard) });
