import { z } from 'zod';
import { OAN_EVENT_TYPES, OAN_MESSAGE_SOURCES } from './constants.ts';

export const responseConstraintsSchema = z.looseObject({
  format: z.enum(['freestyle', 'boolean', 'enum', 'json_schema']),
  enumOptions: z.array(z.string()).optional(),
  jsonSchema: z.record(z.string(), z.unknown()).optional(),
  maxLength: z.number().int().positive().optional(),
});

/** The event envelope, identical on the socket and in every REST listing. */
export const envelopeSchema = z.object({
  v: z.literal(1),
  seq: z.string().regex(/^\d+$/),
  eventId: z.uuid(),
  type: z.enum(OAN_EVENT_TYPES),
  goferId: z.string().optional(),
  chatId: z.string().optional(),
  threadId: z.string().optional(),
  conversationId: z.string().optional(),
  source: z.enum(OAN_MESSAGE_SOURCES),
  responseConstraints: responseConstraintsSchema.optional(),
  reply: z.object({ method: z.literal('POST'), path: z.string().startsWith('/api/v1/') }).optional(),
  webUrl: z.url().optional(),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
});
export type OanEventEnvelope = z.infer<typeof envelopeSchema>;

/** An envelope before the projector gives it its per-account `seq`. */
export type OanNotification = Omit<OanEventEnvelope, 'seq'>;

/**
 * Serializes an envelope with a fixed key order, so the bytes stored in the event table, served by
 * `GET /events` and pushed on the socket are the same for the same event, on every replay.
 */
export function serializeEnvelope(e: OanEventEnvelope): string {
  const ordered: Record<string, unknown> = {
    v: e.v,
    seq: e.seq,
    eventId: e.eventId,
    type: e.type,
    goferId: e.goferId,
    chatId: e.chatId,
    threadId: e.threadId,
    conversationId: e.conversationId,
    source: e.source,
    responseConstraints: e.responseConstraints,
    reply: e.reply,
    webUrl: e.webUrl,
    payload: e.payload,
    createdAt: e.createdAt,
  };
  return JSON.stringify(ordered);
}
