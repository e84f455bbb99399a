export * from './shape.ts';
export { fromBase64url, toBase64url } from './encoding.ts';
export { SealedInputError, SealedOpenError } from './errors.ts';
export {
  sealedContent,
  type DeviceKeyPair,
  type OpenOptions,
  type Random,
  type SealOptions,
  type SealRecipientKey,
  type SealedContent,
  type Sealer,
} from './format.ts';
export { webcryptoSealer, type WebCryptoKey } from './webcrypto.ts';
export { nobleSealer } from './noble.ts';
