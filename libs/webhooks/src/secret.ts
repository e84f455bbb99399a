import { randomBytes } from 'node:crypto';

/** A Standard Webhooks signing secret: a 32-byte key, base64, prefixed `whsec_` (the spec allows 24–64). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
