import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fromBase64url,
  nobleSealer,
  sealedContent,
  sealedEnvelope,
  webcryptoSealer,
  type Random,
  type Sealer,
} from '@oan/sealed';
import { b64u, nodeSeal, privateKeyObject, rawPublicKey } from './nodeSeal.ts';

// The vector lives in the document that specifies the format; this test reads it from there, so
// the two cannot drift apart.
const doc = readFileSync(new URL('../../../docs/sealed-messages.md', import.meta.url), 'utf8');
const block = /### Test vector\n[\s\S]*?```json\n([\s\S]*?)\n```/.exec(doc);
if (!block) throw new Error('docs/sealed-messages.md has no ```json block under "### Test vector"');

const hex = z.string().regex(/^([0-9a-f]{2})+$/);
const vector = z
  .strictObject({
    conversationId: z.string(),
    senderAccountId: z.string(),
    content: sealedContent,
    plaintext: z.string(),
    recipients: z.array(
      z.strictObject({
        accountId: z.string(),
        keyId: z.string(),
        privateKey: hex,
        publicKey: z.string(),
        fingerprint: z.string(),
      }),
    ),
    random: z.strictObject({
      ephemeralPrivateKey: hex,
      contentKey: hex,
      nonce: hex,
      recipientNonces: z.array(hex),
    }),
    derived: z.strictObject({
      ephemeralKey: z.string(),
      aad: z.string(),
      wraps: z.array(z.strictObject({ shared: hex, info: z.string(), wrapKey: hex })),
    }),
    envelope: sealedEnvelope,
  })
  .parse(JSON.parse(block[1]!));

const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const draws = [
  vector.random.ephemeralPrivateKey,
  vector.random.contentKey,
  vector.random.nonce,
  ...vector.random.recipientNonces,
].map(bytes);

/** Hands out the vector's draws in order, and fails on any other request. */
function scripted(): Random & { left: () => number } {
  let next = 0;
  const random = (length: number) => {
    const draw = draws[next++];
    if (draw?.length !== length) throw new Error(`draw ${next} is not ${length} bytes`);
    return draw;
  };
  return Object.assign(random, { left: () => draws.length - next });
}

const sealers: [string, Sealer<unknown>][] = [
  ['WebCrypto', webcryptoSealer],
  ['noble', nobleSealer],
];

describe('the test vector of docs/sealed-messages.md', () => {
  for (const [name, sealer] of sealers) {
    it(`${name} seals exactly its envelope from its keys and draws`, async () => {
      const random = scripted();
      const envelope = await sealer.seal(vector.content, {
        conversationId: vector.conversationId,
        senderAccountId: vector.senderAccountId,
        recipients: vector.recipients.map(({ accountId, keyId, publicKey }) => ({
          accountId,
          keyId,
          publicKey: fromBase64url(publicKey),
        })),
        random,
      });
      expect(JSON.stringify(envelope)).toBe(JSON.stringify(vector.envelope));
      expect(random.left()).toBe(0);
    });

    it(`${name} reads each private key's public key and fingerprint, and opens it with each`, async () => {
      for (const r of vector.recipients) {
        const { privateKey, publicKey } = await sealer.importDeviceKey(bytes(r.privateKey));
        expect(b64u(publicKey)).toBe(r.publicKey);
        expect(await sealer.fingerprint(publicKey)).toBe(r.fingerprint);
        const opened = await sealer.open(vector.envelope, {
          conversationId: vector.conversationId,
          senderAccountId: vector.senderAccountId,
          myAccountId: r.accountId,
          keyId: r.keyId,
          privateKey,
        });
        expect(opened).toEqual(vector.content);
      }
    });
  }

  it('follows from node:crypto and the steps of the document alone', () => {
    expect(vector.plaintext).toBe(JSON.stringify(vector.content));
    for (const r of vector.recipients) {
      const publicKey = rawPublicKey(privateKeyObject(bytes(r.privateKey)));
      expect(b64u(publicKey)).toBe(r.publicKey);
      const fingerprint = createHash('sha256').update(publicKey).digest('hex').slice(0, 40);
      expect(r.fingerprint).toBe(fingerprint.match(/.{4}/g)!.join(' '));
    }

    const { envelope, ...derived } = nodeSeal({
      plaintext: new TextEncoder().encode(vector.plaintext),
      conversationId: vector.conversationId,
      senderAccountId: vector.senderAccountId,
      recipients: vector.recipients.map(({ accountId, keyId, publicKey }) => ({
        accountId,
        keyId,
        publicKey: fromBase64url(publicKey),
      })),
      draws,
    });
    expect(derived).toEqual(vector.derived);
    expect(envelope).toEqual(vector.envelope);
  });
});
