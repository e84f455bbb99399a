import { randomBytes, randomUUID } from 'node:crypto';
import {
  nobleSealer,
  webcryptoSealer,
  type OpenOptions,
  type SealOptions,
  type SealRecipientKey,
  type SealedContent,
  type SealedEnvelope,
  type Sealer,
} from '@oan/sealed';

/** Opening with a device key given as its raw bytes, imported into the implementation that opens. */
export type OpenWithRaw = Omit<OpenOptions<unknown>, 'privateKey'> & { rawPrivateKey: Uint8Array };

/** One implementation, its key type hidden, so that any one can seal for any other. */
export interface Impl {
  name: string;
  seal(content: SealedContent, options: SealOptions): Promise<SealedEnvelope>;
  open(envelope: unknown, options: OpenWithRaw): Promise<SealedContent>;
  publicKeyOf(rawPrivateKey: Uint8Array): Promise<Uint8Array>;
  fingerprint(publicKey: Uint8Array): Promise<string>;
}

function impl<K>(name: string, sealer: Sealer<K>): Impl {
  return {
    name,
    seal: (content, options) => sealer.seal(content, options),
    open: async (envelope, { rawPrivateKey, ...options }) => {
      const { privateKey } = await sealer.importDeviceKey(rawPrivateKey);
      return sealer.open(envelope, { ...options, privateKey });
    },
    publicKeyOf: async (raw) => (await sealer.importDeviceKey(raw)).publicKey,
    fingerprint: (publicKey) => sealer.fingerprint(publicKey),
  };
}

export const webcrypto = impl('WebCrypto', webcryptoSealer);
export const noble = impl('noble', nobleSealer);
export const impls = [webcrypto, noble];
/** Every (sealing, opening) pair of implementations, the same one twice included. */
export const pairs = impls.flatMap((sealer) => impls.map((opener) => [sealer, opener] as const));

export interface Device extends SealRecipientKey {
  rawPrivateKey: Uint8Array;
}

export async function device(accountId: string): Promise<Device> {
  const rawPrivateKey = new Uint8Array(randomBytes(32));
  return { accountId, keyId: randomUUID(), rawPrivateKey, publicKey: await noble.publicKeyOf(rawPrivateKey) };
}

/** A conversation of Alice (two devices, the first sends) and Bob (three devices), fresh ids. */
export async function conversation() {
  const alice = randomUUID();
  const bob = randomUUID();
  const aliceDevices = [await device(alice), await device(alice)];
  const bobDevices = [await device(bob), await device(bob), await device(bob)];
  const all = [...bobDevices, ...aliceDevices];
  return {
    conversationId: randomUUID(),
    alice,
    bob,
    aliceDevices,
    bobDevices,
    all,
    recipients: all.map(({ accountId, keyId, publicKey }) => ({ accountId, keyId, publicKey })),
  };
}
export type Conversation = Awaited<ReturnType<typeof conversation>>;

/** Open options for `reader` of a message Alice sent in `c`. */
export const asReader = (c: Conversation, reader: Device): OpenWithRaw => ({
  conversationId: c.conversationId,
  senderAccountId: c.alice,
  myAccountId: reader.accountId,
  keyId: reader.keyId,
  rawPrivateKey: reader.rawPrivateKey,
});
