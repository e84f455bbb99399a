import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header one service's internal call carries to another (gateway → auth). */
export const INTERNAL_CALL_HEADER = 'x-oan-internal';

/**
 * The shared secret of internal calls, derived from JWT_SECRET (which both ends already hold) under
 * a label of its own, so it is neither a token key nor usable as one.
 */
const internalSecret = (jwtSecret: string): string =>
  createHmac('sha256', jwtSecret).update('oan internal calls v1').digest('hex');

/** The headers an internal call sends. */
export const internalCallHeaders = (jwtSecret: string): Record<string, string> => ({
  [INTERNAL_CALL_HEADER]: internalSecret(jwtSecret),
});

/** Whether `header` is the internal secret (compared in constant time). */
export function isInternalCall(jwtSecret: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(internalSecret(jwtSecret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The header of an internal call that asks for a command to run exactly once under this id (the
 * runtimes service carrying out a worker's reply). Honoured only beside the internal secret.
 */
export const COMMAND_ID_HEADER = 'x-oan-command-id';

/** The headers of an internal call that carries a command id. */
export const internalCommandHeaders = (jwtSecret: string, commandId: string): Record<string, string> => ({
  ...internalCallHeaders(jwtSecret),
  [COMMAND_ID_HEADER]: commandId,
});
