import { parse as parseUuid, v5 as uuidv5 } from 'uuid';
import type { NotificationSpec } from '@oan/readmodels';
import {
  OAN_BASE_PATH,
  type OanEventEnvelope,
  type OanEventType,
  type OanMessageSource,
} from '@oan/protocol';

/** Fixed namespace of every envelope eventId (changing it would change every id on replay). */
const EVENT_ID_NAMESPACE = '6f1c9a52-4d0b-4f7e-9a51-0a1e3c5d7b90';
/** Its bytes, and the name's as bytes: the same id, without uuid parsing both on every call. */
const EVENT_ID_NAMESPACE_BYTES = parseUuid(EVENT_ID_NAMESPACE);

/** An OAN notification on `oan.events` (schemas/oan/OanNotification.v1.avsc). */
export interface Notification {
  eventId: string;
  accountId: string;
  type: OanEventType;
  source: OanMessageSource;
  goferId: string | null;
  chatId: string | null;
  threadId: string | null;
  conversationId: string | null;
  responseConstraints: string | null;
  replyPath: string | null;
  webUrl: string | null;
  payload: string;
  createdAt: string;
  sourceEventId: string;
}

/**
 * Deterministic eventId: the id is a function of the source event, the recipient and the envelope type (and
 * the spec's discriminator, when one event yields the type more than once per account).
 */
export function envelopeEventId(
  sourceEventId: string,
  recipient: string,
  type: string,
  discriminator?: string,
): string {
  const name = `${sourceEventId}:${recipient}:${type}`;
  const full = discriminator === undefined ? name : `${name}:${discriminator}`;
  return uuidv5(Buffer.from(full, 'utf8'), EVENT_ID_NAMESPACE_BYTES);
}

export function toNotification(sourceEventId: string, spec: NotificationSpec): Notification {
  return {
    eventId: envelopeEventId(sourceEventId, spec.recipient, spec.type, spec.discriminator),
    accountId: spec.recipient,
    type: spec.type,
    source: spec.source,
    goferId: spec.goferId ?? null,
    chatId: spec.chatId ?? null,
    threadId: spec.threadId ?? null,
    conversationId: spec.conversationId ?? null,
    responseConstraints: spec.responseConstraints ? JSON.stringify(spec.responseConstraints) : null,
    replyPath: spec.reply ? `${OAN_BASE_PATH}${spec.reply}` : null,
    webUrl: spec.webUrl ?? null,
    payload: JSON.stringify(spec.payload),
    createdAt: spec.createdAt,
    sourceEventId,
  };
}

/** The wire envelope (`OanEventEnvelope`); absent optional fields are omitted, never null. */
export function toEnvelope(n: Notification, seq: bigint): OanEventEnvelope {
  const e: OanEventEnvelope = {
    v: 1,
    seq: seq.toString(),
    eventId: n.eventId,
    type: n.type,
    source: n.source,
    payload: JSON.parse(n.payload) as Record<string, unknown>,
    createdAt: n.createdAt,
  };
  if (n.goferId !== null) e.goferId = n.goferId;
  if (n.chatId !== null) e.chatId = n.chatId;
  if (n.threadId !== null) e.threadId = n.threadId;
  if (n.conversationId !== null) e.conversationId = n.conversationId;
  if (n.responseConstraints !== null) {
    e.responseConstraints = JSON.parse(n.responseConstraints) as OanEventEnvelope['responseConstraints'];
  }
  if (n.replyPath !== null) e.reply = { method: 'POST', path: n.replyPath };
  if (n.webUrl !== null) e.webUrl = n.webUrl;
  return e;
}

/** Every envelope's text starts with these bytes, then its seq and a closing quote (`envelopeText`). */
export const ENVELOPE_HEAD = '{"v":1,"seq":"';

/**
 * The envelope's text: the bytes `serializeEnvelope(toEnvelope(n, seq))` gives (a property test holds
 * them equal), written without parsing the payload and response constraints back into objects to
 * serialize them again. Both are `JSON.stringify` output already (`toNotification`), which that
 * round trip leaves as it is; the ids and texts around them are JSON-quoted here.
 */
export function envelopeText(n: Notification, seq: bigint): string {
  return `${ENVELOPE_HEAD}${seq}"${envelopeRest(n)}`;
}

/**
 * What follows the seq in the envelope's text: the same for every seq, so stage 2's one statement
 * (`writeEnvelopesAlone`) joins `ENVELOPE_HEAD`, the seq it takes and this in SQL.
 */
export function envelopeRest(n: Notification): string {
  const q = JSON.stringify;
  let text = `,"eventId":${q(n.eventId)},"type":${q(n.type)}`;
  if (n.goferId !== null) text += `,"goferId":${q(n.goferId)}`;
  if (n.chatId !== null) text += `,"chatId":${q(n.chatId)}`;
  if (n.threadId !== null) text += `,"threadId":${q(n.threadId)}`;
  if (n.conversationId !== null) text += `,"conversationId":${q(n.conversationId)}`;
  text += `,"source":${q(n.source)}`;
  if (n.responseConstraints !== null) text += `,"responseConstraints":${n.responseConstraints}`;
  if (n.replyPath !== null) text += `,"reply":{"method":"POST","path":${q(n.replyPath)}}`;
  if (n.webUrl !== null) text += `,"webUrl":${q(n.webUrl)}`;
  return `${text},"payload":${n.payload},"createdAt":${q(n.createdAt)}}`;
}
