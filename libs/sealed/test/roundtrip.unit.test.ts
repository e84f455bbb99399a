import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SealedOpenError, fromBase64url, toBase64url } from '@oan/sealed';
import { asReader, conversation, pairs } from './support.ts';

// Any text, lone surrogates and NULs included, and ids without a line feed.
const contentArb = fc.record(
  {
    content: fc.string({ unit: 'binary', maxLength: 300 }),
    attachmentIds: fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 5 }),
  },
  { requiredKeys: ['content'] },
);
const idArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }).filter((s) => !s.includes('\n'));

describe('sealing any content between the two implementations', () => {
  it('opens to the same content for every reader, whoever sealed and opened it', async () => {
    const c = await conversation();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...pairs),
        contentArb,
        idArb,
        async ([sealer, opener], content, id) => {
          const conversationId = `${c.conversationId}/${id}`;
          const envelope = await sealer.seal(content, {
            conversationId,
            senderAccountId: c.alice,
            recipients: c.recipients,
          });
          for (const reader of [c.bobDevices[2]!, c.aliceDevices[0]!]) {
            expect(await opener.open(envelope, { ...asReader(c, reader), conversationId })).toEqual(content);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('never opens with one bit of the ciphertext flipped', async () => {
    const c = await conversation();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...pairs),
        contentArb,
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        async ([sealer, opener], content, at, bit) => {
          const envelope = await sealer.seal(content, {
            conversationId: c.conversationId,
            senderAccountId: c.alice,
            recipients: c.recipients,
          });
          const bytes = fromBase64url(envelope.ciphertext);
          bytes[at % bytes.length]! ^= 1 << bit;
          const changed = { ...envelope, ciphertext: toBase64url(bytes) };
          await expect(opener.open(changed, asReader(c, c.bobDevices[0]!))).rejects.toBeInstanceOf(
            SealedOpenError,
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
