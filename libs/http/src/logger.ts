import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Paths that may hold credentials or codes. Invariant 6: they never reach a log line.
 * Request bodies are never logged at all; these cover objects that code logs explicitly.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'token',
  'apiKey',
  'code',
  'idToken',
  'password',
  'auth.token',
  '*.token',
  '*.apiKey',
  '*.code',
  '*.idToken',
];

export function createLogger(name: string, level = 'info', opts: LoggerOptions = {}): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...opts });
}
export type { Logger };
