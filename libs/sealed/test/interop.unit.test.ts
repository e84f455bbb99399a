import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromBase64url, nobleSealer, sealedEnvelope, webcryptoSealer } from '@oan/sealed';
import { asReader, conversation, impls, pairs } from './support.ts';

const content = {
  content: 'Meet at the café at 10? 🙂',
  attachmentIds: ['05195985-2eaf-4f94-9602-b4165f517b12'],
};

describe('a conversation where both sides have several device keys', () => {
  for (const [sealer, opener] of pairs) {
    it(`${sealer.name} seals once for every device, ${opener.name} opens it on each`, async () => {
      const c = await conversation();
      const envelope = await sealer.seal(content, {
        conversationId: c.conversationId,
        senderAccountId: c.alice,
        recipients: c.recipients,
      });

      expect(sealedEnvelope.parse(envelope)).toEqual(envelope);
      expect(envelope.recipients.map((r) => [r.accountId, r.keyId])).toEqual(
        c.all.map((d) => [d.accountId, d.keyId]),
      );
      for (const reader of c.all) {
        expect(await opener.open(envelope, asReader(c, reader))).toEqual(content);
      }
    });
  }

  for (const sealer of impls) {
    it(`${sealer.name} draws fresh randomness for each message`, async () => {
      const c = await conversation();
      const options = {
        conversationId: c.conversationId,
        senderAccountId: c.alice,
        recipients: c.recipients,
      };
      const [one, two] = [await sealer.seal(content, options), await sealer.seal(content, options)];

      expect(two.ephemeralKey).not.toBe(one.ephemeralKey);
      expect(two.nonce).not.toBe(one.nonce);
      expect(two.ciphertext).not.toBe(one.ciphertext);
      expect(two.recipients[0]!.wrappedKey).not.toBe(one.recipients[0]!.wrappedKey);
      // The ciphertext is the plaintext's length and a 16-byte tag.
      const plaintext = new TextEncoder().encode(JSON.stringify(content));
      expect(fromBase64url(one.ciphertext)).toHaveLength(plaintext.length + 16);
    });
  }
});

describe('device keys each implementation generates', () => {
  it('WebCrypto keeps the private half unexportable, and noble seals to it', async () => {
    const c = await conversation();
    const device = await webcryptoSealer.generateDeviceKey();
    expect(device.privateKey.extractable).toBe(false);
    await expect(globalThis.crypto.subtle.exportKey('pkcs8', device.privateKey)).rejects.toThrow();
    const keyId = crypto.randomUUID();

    const envelope = await nobleSealer.seal(content, {
      conversationId: c.conversationId,
      senderAccountId: c.alice,
      recipients: [{ accountId: c.bob, keyId, publicKey: device.publicKey }],
    });
    const opened = await webcryptoSealer.open(envelope, {
      conversationId: c.conversationId,
      senderAccountId: c.alice,
      myAccountId: c.bob,
      keyId,
      privateKey: device.privateKey,
    });
    expect(opened).toEqual(content);
  });

  it('noble makes 32-byte keys that WebCrypto seals to', async () => {
    const c = await conversation();
    const device = await nobleSealer.generateDeviceKey();
    expect([device.privateKey.length, device.publicKey.length]).toEqual([32, 32]);
    const keyId = crypto.randomUUID();

    const envelope = await webcryptoSealer.seal(content, {
      conversationId: c.conversationId,
      senderAccountId: c.alice,
      recipients: [{ accountId: c.bob, keyId, publicKey: device.publicKey }],
    });
    const opened = await nobleSealer.open(envelope, {
      conversationId: c.conversationId,
      senderAccountId: c.alice,
      myAccountId: c.bob,
      keyId,
      privateKey: device.privateKey,
    });
    expect(opened).toEqual(content);
  });

  it('both read the same public key out of the same private key', async () => {
    const c = await conversation();
    for (const d of c.all) {
      for (const i of impls) expect(await i.publicKeyOf(d.rawPrivateKey)).toEqual(d.publicKey);
    }
  });
});

describe('a fingerprint', () => {
  for (const i of impls) {
    it(`${i.name}: the first 20 bytes of SHA-256 of the key, ten groups of four hex`, async () => {
      const { all } = await conversation();
      for (const { publicKey } of all) {
        const hex = createHash('sha256').update(publicKey).digest('hex').slice(0, 40);
        const text = await i.fingerprint(publicKey);
        expect(text).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){9}$/);
        expect(text.replaceAll(' ', '')).toBe(hex);
      }
    });
  }
});
