import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@oan/protocol';

/**
 * The `Idempotency-Key` value (IETF httpapi idempotency-key-header draft §2.1): an RFC 8941 sf-string,
 * `"…"` with `\"` and `\\` escapes; the bare token many clients send (`Idempotency-Key: abc-123`) is
 * taken too. Returns the key, or why it is refused (a 400). Two header lines arrive joined by a comma,
 * which a bare key may not hold, so they are refused rather than one silently chosen.
 */
export function parseIdempotencyKey(value: string): { key: string } | { error: string } {
  const v = value.trim();
  let key: string;
  if (v.startsWith('"')) {
    const m = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(v);
    if (!m) return { error: 'Idempotency-Key must be one structured-field string ("…", printable ASCII)' };
    key = m[1]!.replace(/\\(["\\])/g, '$1');
  } else {
    if (!/^[\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]+$/.test(v)) {
      return { error: 'Idempotency-Key must be one key of printable ASCII without spaces or commas' };
    }
    key = v;
  }
  if (key.length === 0) return { error: 'Idempotency-Key must not be empty' };
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return { error: `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` };
  }
  return { key };
}
