/**
 * The page's part of @oan/sealed, with the zod it checks envelopes with, as a chunk of its own:
 * loaded when a conversation page first needs it, so the other pages' script stays as small as it was.
 */
export const loadSealed = () => import('./crypto');

/** WebCrypto (and so sealing) exists only on a secure origin: https, or this machine. */
export const canSeal = () => window.isSecureContext && globalThis.crypto?.subtle !== undefined;
