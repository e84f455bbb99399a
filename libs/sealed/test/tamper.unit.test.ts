import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SealedOpenError, fromBase64url, toBase64url, type SealedEnvelope } from '@oan/sealed';
import { nodeSeal } from './nodeSeal.ts';
import { asReader, conversation, device, impls, type Conversation, type OpenWithRaw } from './support.ts';

const content = { content: 'The door code is 4711.' };

/** Every way a message fails to open looks the same: one class, one code, one message, no cause. */
async function refused(opening: Promise<unknown>) {
  const error: unknown = await opening.then(
    () => 'it opened',
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SealedOpenError);
  expect(error).toMatchObject({ code: 'SEALED_CORRUPT', message: 'The sealed message cannot be opened' });
  expect((error as Error).cause).toBeUndefined();
}

const flipped = (text: string, at: number) => {
  const bytes = fromBase64url(text);
  bytes[at]! ^= 0x01;
  return toBase64url(bytes);
};

// Each implementation opens what the other sealed.
for (const opener of impls) {
  const sealer = impls.find((i) => i !== opener)!;

  describe(`a message ${sealer.name} sealed, when ${opener.name} opens it changed or misaddressed`, () => {
    let c: Conversation;
    let envelope: SealedEnvelope;
    let bob: OpenWithRaw;
    const edited = (change: (e: SealedEnvelope) => void) => {
      const copy = structuredClone(envelope);
      change(copy);
      return copy;
    };

    beforeAll(async () => {
      c = await conversation();
      envelope = await sealer.seal(content, {
        conversationId: c.conversationId,
        senderAccountId: c.alice,
        recipients: c.recipients,
      });
      bob = asReader(c, c.bobDevices[1]!);
    });

    it('opens as it was sent', async () => {
      expect(await opener.open(envelope, bob)).toEqual(content);
    });

    it('does not open in another conversation', async () => {
      await refused(opener.open(envelope, { ...bob, conversationId: randomUUID() }));
    });

    it('does not open as sent by another account, the reader itself or a stranger', async () => {
      await refused(opener.open(envelope, { ...bob, senderAccountId: c.bob }));
      await refused(opener.open(envelope, { ...bob, senderAccountId: randomUUID() }));
    });

    it('does not open with any single bit of any binary field flipped', async () => {
      const mine = envelope.recipients.findIndex((r) => r.keyId === bob.keyId);
      const fields: [string, (e: SealedEnvelope) => { text: string; set: (t: string) => void }][] = [
        ['ephemeralKey', (e) => ({ text: e.ephemeralKey, set: (t) => (e.ephemeralKey = t) })],
        ['nonce', (e) => ({ text: e.nonce, set: (t) => (e.nonce = t) })],
        ['ciphertext', (e) => ({ text: e.ciphertext, set: (t) => (e.ciphertext = t) })],
        [
          'recipient nonce',
          (e) => ({ text: e.recipients[mine]!.nonce, set: (t) => (e.recipients[mine]!.nonce = t) }),
        ],
        [
          'wrappedKey',
          (e) => ({ text: e.recipients[mine]!.wrappedKey, set: (t) => (e.recipients[mine]!.wrappedKey = t) }),
        ],
      ];
      let tried = 0;
      for (const [, field] of fields) {
        const length = fromBase64url(field(envelope).text).length;
        for (let at = 0; at < length; at++) {
          await refused(
            opener.open(
              edited((e) => field(e).set(flipped(field(e).text, at))),
              bob,
            ),
          );
          tried++;
        }
      }
      // E, N, the ciphertext (plaintext and tag), the entry's nonce and wrapped key: every byte tried.
      expect(tried).toBe(32 + 12 + (JSON.stringify(content).length + 16) + 12 + 48);
    });

    it('does not open when its recipient entry is edited', async () => {
      const mine = envelope.recipients.findIndex((r) => r.keyId === bob.keyId);
      const other = envelope.recipients.findIndex((r) => r.keyId === c.bobDevices[0]!.keyId);
      // Another device's wrapped key in the reader's entry.
      await refused(
        opener.open(
          edited((e) => {
            const { nonce, wrappedKey } = e.recipients[other]!;
            Object.assign(e.recipients[mine]!, { nonce, wrappedKey });
          }),
          bob,
        ),
      );
      // Another device's entry relabelled as the reader's, the reader's own taken out.
      await refused(
        opener.open(
          edited((e) => {
            e.recipients[other]!.keyId = bob.keyId;
            e.recipients.splice(mine, 1);
          }),
          bob,
        ),
      );
      // The reader's entry taken out, or listed twice.
      await refused(
        opener.open(
          edited((e) => e.recipients.splice(mine, 1)),
          bob,
        ),
      );
      await refused(
        opener.open(
          edited((e) => e.recipients.push({ ...e.recipients[mine]! })),
          bob,
        ),
      );
      // The reader's keyId or accountId changed.
      await refused(
        opener.open(
          edited((e) => (e.recipients[mine]!.keyId = randomUUID())),
          bob,
        ),
      );
      await refused(
        opener.open(
          edited((e) => (e.recipients[mine]!.accountId = c.alice)),
          bob,
        ),
      );
    });

    it("does not open for an account that takes another account's entry", async () => {
      const mallory = await device(randomUUID());
      const asMallory = { ...bob, myAccountId: mallory.accountId, keyId: mallory.keyId };
      const mine = envelope.recipients.findIndex((r) => r.keyId === bob.keyId);
      const relabelled = edited((e) => Object.assign(e.recipients[mine]!, { accountId: mallory.accountId }));
      await refused(
        opener.open(relabelled, { ...asMallory, keyId: bob.keyId, rawPrivateKey: mallory.rawPrivateKey }),
      );
      const rekeyed = edited((e) =>
        Object.assign(e.recipients[mine]!, { accountId: mallory.accountId, keyId: mallory.keyId }),
      );
      await refused(opener.open(rekeyed, { ...asMallory, rawPrivateKey: mallory.rawPrivateKey }));
      // Bob's own entry relabelled to Alice's account, opened by his key as if it were hers.
      const asAlice = edited((e) => (e.recipients[mine]!.accountId = c.alice));
      await refused(opener.open(asAlice, { ...bob, myAccountId: c.alice }));
      // Alice's entry opened by Bob as if he were Alice's device, with his own key.
      const alices = c.aliceDevices[1]!;
      await refused(opener.open(envelope, { ...bob, myAccountId: c.alice, keyId: alices.keyId }));
    });

    it('does not open with the wrong private key', async () => {
      await refused(opener.open(envelope, { ...bob, rawPrivateKey: c.bobDevices[2]!.rawPrivateKey }));
      await refused(opener.open(envelope, { ...bob, rawPrivateKey: (await device(c.bob)).rawPrivateKey }));
    });

    it('does not open what is not an envelope of this format', async () => {
      for (const notOne of [
        null,
        'sealed',
        {},
        edited((e) => ((e as { alg: string }).alg = 'oan-sealed-v2')),
        edited((e) => Object.assign(e, { extra: 1 })),
        edited((e) => (e.ciphertext = `${e.ciphertext}=`)),
        edited((e) => (e.recipients = [])),
      ]) {
        await refused(opener.open(notOne, bob));
      }
    });

    it('does not open a sealed plaintext that is not the content JSON', async () => {
      const utf8 = (t: string) => new TextEncoder().encode(t);
      const sealRaw = (plaintext: Uint8Array) =>
        nodeSeal({
          plaintext,
          conversationId: c.conversationId,
          senderAccountId: c.alice,
          recipients: c.recipients,
        }).envelope;
      // The control: any JSON spelling of the shape opens, not only the one writers use.
      expect(await opener.open(sealRaw(utf8(' { "attachmentIds" : [], "content" : "hi" } ')), bob)).toEqual({
        content: 'hi',
        attachmentIds: [],
      });
      for (const plaintext of [
        utf8('{"content":1}'),
        utf8('{"content":"hi","extra":true}'),
        utf8('{"content":"hi","attachmentIds":[1]}'),
        utf8('["hi"]'),
        utf8('hi'),
        utf8('\uFEFF{"content":"hi"}'),
        Uint8Array.from([...utf8('{"content":"'), 0xff, ...utf8('"}')]),
      ]) {
        await refused(opener.open(sealRaw(plaintext), bob));
      }
    });

    // The seal binds each entry to its reader, not the list as a whole: the others cannot tell.
    it("still opens when another reader's entry is taken out", async () => {
      const rest = edited((e) => (e.recipients = e.recipients.filter((r) => r.keyId === bob.keyId)));
      expect(await opener.open(rest, bob)).toEqual(content);
    });
  });
}
