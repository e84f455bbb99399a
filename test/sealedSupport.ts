import { randomUUID } from 'node:crypto';
import type { OanEventEnvelope } from '@oan/protocol';
import {
  fromBase64url,
  nobleSealer,
  toBase64url,
  type SealedContent,
  type SealedEnvelope,
  type Sealer,
} from '@oan/sealed';
import { waitFor, type TestConnector } from '@oan/testing';
import type { Answer } from './support.ts';

/**
 * A client of sealed messages (docs/sealed-messages.md) as tests through the edge play it, with the
 * real `@oan/sealed`: a device makes its key pair, publishes the public half, keeps the private one,
 * seals for a conversation's current keys as the key directory lists them, opens what it is sent.
 */

/** A key as the directory shows it. */
export interface PublishedKey {
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
}
export interface ConversationKey extends PublishedKey {
  accountId: string;
}

/** A message as the POST answers it and history lists it. */
export interface StoredMessage {
  id: string;
  senderUserId: string;
  content: string;
  attachments: unknown[];
  changeSequence: string;
  createdAt: string;
  sealed?: SealedEnvelope;
}

/** One device of an account: its key published, its private half held here by one implementation. */
export interface Device {
  accountId: string;
  key: PublishedKey;
  /** Seals from this device's account for the given keys. */
  seal(content: SealedContent, conversationId: string, keys: ConversationKey[]): Promise<SealedEnvelope>;
  /** Opens with this device's key a message the server says `senderAccountId` sent in `conversationId`. */
  open(sealed: unknown, conversationId: string, senderAccountId: string): Promise<SealedContent>;
}

const need = <T>(res: Answer<T>, status: number, what: string): T => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
};

/** A fresh device public key as `PUT /keys/{keyId}` takes it (base64url of 32 bytes); nothing keeps its private half. */
export async function newPublicKey(): Promise<string> {
  return toBase64url((await nobleSealer.generateDeviceKey()).publicKey);
}

/** Makes a key pair with `sealer` and publishes it through the edge (`PUT /keys/{keyId}`, 201). */
export async function publishDevice<K>(
  c: TestConnector,
  accountId: string,
  sealer: Sealer<K>,
): Promise<Device> {
  const { privateKey, publicKey } = await sealer.generateDeviceKey();
  const keyId = randomUUID();
  const put = await c.rest<PublishedKey>('PUT', `/keys/${keyId}`, { publicKey: toBase64url(publicKey) });
  const key = need(put, 201, `PUT /keys/${keyId}`);
  return {
    accountId,
    key,
    seal: (content, conversationId, keys) =>
      sealer.seal(content, {
        conversationId,
        senderAccountId: accountId,
        recipients: keys.map((k) => ({
          accountId: k.accountId,
          keyId: k.keyId,
          publicKey: fromBase64url(k.publicKey),
        })),
      }),
    open: (sealed, conversationId, senderAccountId) =>
      sealer.open(sealed, { conversationId, senderAccountId, myAccountId: accountId, keyId, privateKey }),
  };
}

/** Both sides' current keys of a conversation (`GET /conversations/{id}/keys`). */
export async function conversationKeys(c: TestConnector, conversationId: string): Promise<ConversationKey[]> {
  const res = await c.rest<{ keys: ConversationKey[] }>('GET', `/conversations/${conversationId}/keys`);
  return need(res, 200, 'GET …/keys').keys;
}

/** Seals `content` from `device` for every current key of the conversation, as a client does before sending. */
export async function sealForConversation(
  c: TestConnector,
  device: Device,
  conversationId: string,
  content: SealedContent,
): Promise<SealedEnvelope> {
  return device.seal(content, conversationId, await conversationKeys(c, conversationId));
}

/** `POST /conversations/{id}/messages` with a sealed body (and any of its other fields), 201. */
export async function sendSealed(
  c: TestConnector,
  conversationId: string,
  sealed: SealedEnvelope,
  extra: Record<string, unknown> = {},
): Promise<StoredMessage> {
  const res = await c.rest<StoredMessage>('POST', `/conversations/${conversationId}/messages`, {
    sealed,
    ...extra,
  });
  return need(res, 201, 'POST …/messages (sealed)');
}

/** The `relay_message` of `messageId` the connector's socket pushed (the live push, not a backfill). */
export const relayOf = (c: TestConnector, messageId: string): Promise<OanEventEnvelope> =>
  waitFor(() => c.pushes.find((e) => e.type === 'relay_message' && e.payload.messageId === messageId), {
    what: `the relay_message of ${messageId} on the socket`,
  });

/** Opens a sealed `relay_message` with `device`; the sender is the other side, as the reader knows it. */
export const openRelay = (device: Device, relay: OanEventEnvelope, senderAccountId: string) =>
  device.open(relay.payload.sealed, relay.conversationId!, senderAccountId);

/** The history item of `messageId` as `c` reads it, once the projector has it. */
export const historyItem = (c: TestConnector, conversationId: string, messageId: string) =>
  waitFor(
    async () => {
      const res = await c.rest<StoredMessage[]>('GET', `/conversations/${conversationId}/messages`);
      return need(res, 200, 'GET …/messages').find((m) => m.id === messageId);
    },
    { intervalMs: 200, what: `${messageId} in the history` },
  );
