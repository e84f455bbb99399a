import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Paths that may hold credentials or codes: they never reach a log line.
 * Request bodies are never logged at all; these cover objects that code logs explicitly.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  // The fleet's internal-call secret (gateway → auth).
  'req.headers["x-oan-internal"]',
  'headers["x-oan-internal"]',
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

/**
 * An error as it may be logged. Database errors carry their SQL with the parameters inlined (key
 * hashes, emails), so only their class, SQLSTATE and the server's own message are kept.
 */
const SQL_PREFIXED =
  /^\s*(select|insert|update|delete|with|truncate|begin|commit|rollback|set|create|alter|drop|lock)\b[\s\S]* - /i;

export function loggableError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  // knex prefixes a driver's message with the statement (parameters inlined): keep only the driver's
  // part, and no stack (its first line repeats the message).
  if (sqlState || SQL_PREFIXED.test(err.message)) {
    const detail = err.message.split(' - ').pop() ?? '';
    return { type: err.name, ...(sqlState ? { sqlState } : {}), message: detail.slice(0, 300) };
  }
  return { type: err.name, message: err.message, stack: err.stack };
}
