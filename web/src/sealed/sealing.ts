import type { SealedEnvelope } from '@oan/sealed';
import { api, need } from '../api/client';
import type { DeviceKey } from './keyStore';
import { canSeal, loadSealed } from './lib';

/** A current device key of one side of the conversation, with the fingerprint worked out here. */
export interface ConversationKey {
  accountId: string;
  keyId: string;
  publicKey: string;
  /** Computed in the browser from the public key it seals to, not taken from the server's answer. */
  fingerprint: string;
  publishedAt: string;
}

/** Both sides' current keys (`GET …/keys`), oldest first as the server lists them. */
export async function conversationKeys(conversationId: string): Promise<ConversationKey[]> {
  const { keys } = need(
    await api.GET('/api/v1/conversations/{conversationId}/keys', { params: { path: { conversationId } } }),
    'keys',
  );
  const { fromBase64url, webcryptoSealer } = await loadSealed();
  return Promise.all(
    keys.map(async (k) => ({
      accountId: k.accountId,
      keyId: k.keyId,
      publicKey: k.publicKey,
      fingerprint: await webcryptoSealer.fingerprint(fromBase64url(k.publicKey)),
      publishedAt: k.publishedAt,
    })),
  );
}

/**
 * What a send or a correction carries: sealed to every current key of both sides (the sender's own
 * other devices too) when the other side has one, else the plain text.
 */
export type Outgoing = { sealed: SealedEnvelope } | { content: string };

export async function outgoing(
  text: string,
  conversationId: string,
  me: string,
  { plainAllowed }: { plainAllowed: boolean },
): Promise<Outgoing> {
  if (!canSeal()) {
    if (plainAllowed) return { content: text };
    throw new Error('This page cannot seal here (it is not on a secure origin).');
  }
  const keys = await conversationKeys(conversationId);
  const { fromBase64url, webcryptoSealer } = await loadSealed();
  if (!keys.some((k) => k.accountId !== me)) {
    if (plainAllowed) return { content: text };
    throw new Error('The other side has no key now, so this sealed message cannot be corrected.');
  }
  const sealed = await webcryptoSealer.seal(
    { content: text },
    {
      conversationId,
      senderAccountId: me,
      recipients: keys.map((k) => ({
        accountId: k.accountId,
        keyId: k.keyId,
        publicKey: fromBase64url(k.publicKey),
      })),
    },
  );
  return { sealed };
}

/** A message as this browser reads it: its text, or why a sealed one stays closed. */
export type Opened = { state: 'open'; text: string } | { state: 'closed'; why: 'no-key' | 'failed' };

interface Readable {
  id: string;
  senderUserId: string;
  content: string;
  sealed?: SealedEnvelope | undefined;
}

// A message's envelope opens to the same text every time: opened once per page load.
const cache = new Map<string, Opened>();

export async function openMessage(
  m: Readable,
  conversationId: string,
  me: string,
  mine: readonly DeviceKey[],
): Promise<Opened> {
  const { sealed } = m;
  if (!sealed) return { state: 'open', text: m.content };
  const id = `${m.id}\n${sealed.ephemeralKey}`;
  const known = cache.get(id);
  if (known) return known;
  const entry = sealed.recipients.find((r) => r.accountId === me && mine.some((k) => k.keyId === r.keyId));
  const key = mine.find((k) => k.keyId === entry?.keyId);
  let opened: Opened;
  if (!key) {
    opened = { state: 'closed', why: 'no-key' };
  } else {
    try {
      const { webcryptoSealer } = await loadSealed();
      const { content } = await webcryptoSealer.open(sealed, {
        conversationId,
        senderAccountId: m.senderUserId,
        myAccountId: me,
        keyId: key.keyId,
        privateKey: key.privateKey,
      });
      opened = { state: 'open', text: content };
    } catch {
      opened = { state: 'closed', why: 'failed' };
    }
  }
  // A key this browser may yet get (none now) is asked again next time; a failure is final.
  if (opened.state === 'open' || opened.why === 'failed') cache.set(id, opened);
  return opened;
}
