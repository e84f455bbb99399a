/** What the page uses of @oan/sealed (the WebCrypto implementation), loaded through lib.ts. */
export { fromBase64url, toBase64url, webcryptoSealer } from '@oan/sealed';
