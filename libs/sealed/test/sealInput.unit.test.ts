import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MAX_SEALED_RECIPIENTS,
  SealedInputError,
  nobleSealer,
  webcryptoSealer,
  type SealOptions,
  type SealedContent,
} from '@oan/sealed';
import { conversation, device, impls, webcrypto } from './support.ts';

// Low-order points of Curve25519 (u = 0, 1, and a point of order 8): X25519 of any key and one of
// them is all zeros, so a message sealed to one would be readable by anybody.
const lowOrder = [
  new Uint8Array(32),
  Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)),
  Uint8Array.from(Buffer.from('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 'hex')),
];

for (const sealer of impls) {
  describe(`${sealer.name}, asked to seal something it must not`, () => {
    const refuses = async (content: SealedContent, options: SealOptions, message: RegExp) => {
      await expect(sealer.seal(content, options)).rejects.toSatisfy(
        (e) => e instanceof SealedInputError && e.code === 'SEALED_INVALID_INPUT' && message.test(e.message),
      );
    };
    const base = async () => {
      const c = await conversation();
      return { conversationId: c.conversationId, senderAccountId: c.alice, recipients: c.recipients };
    };

    it('refuses a recipient key that is a low-order point', async () => {
      const options = await base();
      for (const publicKey of lowOrder) {
        const recipients = [
          ...options.recipients,
          { accountId: randomUUID(), keyId: randomUUID(), publicKey },
        ];
        await refuses({ content: 'x' }, { ...options, recipients }, /low-order point/);
      }
    });

    it('refuses no recipient, too many, one listed twice, or a key not 32 bytes', async () => {
      const options = await base();
      const one = options.recipients[0]!;
      await refuses({ content: 'x' }, { ...options, recipients: [] }, /recipients must list 1 to 32/);
      const many = await Promise.all(
        Array.from({ length: MAX_SEALED_RECIPIENTS + 1 }, () => device(randomUUID())),
      );
      await refuses({ content: 'x' }, { ...options, recipients: many }, /recipients must list 1 to 32/);
      await refuses({ content: 'x' }, { ...options, recipients: [one, { ...one }] }, /listed twice/);
      const short = { ...one, publicKey: one.publicKey.subarray(1) };
      await refuses({ content: 'x' }, { ...options, recipients: [short] }, /must be 32 bytes/);
      await refuses({ content: 'x' }, { ...options, recipients: [{ ...one, keyId: 'device-1' }] }, /keyId/);
    });

    it('refuses an id with a line feed, which would make two AADs alike', async () => {
      const options = await base();
      await refuses({ content: 'x' }, { ...options, conversationId: 'a\nb' }, /conversationId/);
      await refuses({ content: 'x' }, { ...options, senderAccountId: 'a\nb' }, /senderAccountId/);
      const recipients = [{ ...options.recipients[0]!, accountId: 'a\nb' }];
      await refuses({ content: 'x' }, { ...options, recipients }, /recipient accountId/);
    });

    it('refuses content of another shape or over the ciphertext limit', async () => {
      const options = await base();
      const shape = /content must be/;
      await refuses({ content: 'x', extra: 1 } as SealedContent, options, shape);
      await refuses({ content: 5 } as unknown as SealedContent, options, shape);
      await refuses({ content: 'x', attachmentIds: [7] } as unknown as SealedContent, options, shape);
      // {"content":"…"} is 14 bytes around the text; with the 16-byte tag the limit is 40,000 bytes.
      const fits = 'é'.repeat((40_000 - 16 - 14) / 2);
      await expect(sealer.seal({ content: fits }, options)).resolves.toBeDefined();
      await refuses({ content: `${fits}x` }, options, /over 39984 bytes/);
    });

    it('refuses a random source that gives the wrong number of bytes', async () => {
      const options = await base();
      await refuses({ content: 'x' }, { ...options, random: (n) => new Uint8Array(n - 1) }, /random\(32\)/);
    });
  });
}

describe('opening with something that is not a private X25519 key', () => {
  it("is the caller's error, not a corrupt message", async () => {
    const c = await conversation();
    const envelope = await webcrypto.seal(
      { content: 'x' },
      {
        conversationId: c.conversationId,
        senderAccountId: c.alice,
        recipients: c.recipients,
      },
    );
    const options = { conversationId: c.conversationId, senderAccountId: c.alice, myAccountId: c.bob };
    const keyId = c.bobDevices[0]!.keyId;
    const { subtle } = globalThis.crypto;
    const publicKey = await subtle.importKey('raw', c.bobDevices[0]!.publicKey, { name: 'X25519' }, true, []);
    const aes = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['decrypt']);

    for (const privateKey of [publicKey, aes]) {
      await expect(webcryptoSealer.open(envelope, { ...options, keyId, privateKey })).rejects.toBeInstanceOf(
        SealedInputError,
      );
    }
    const short = c.bobDevices[0]!.rawPrivateKey.subarray(1);
    await expect(nobleSealer.open(envelope, { ...options, keyId, privateKey: short })).rejects.toBeInstanceOf(
      SealedInputError,
    );
  });
});
