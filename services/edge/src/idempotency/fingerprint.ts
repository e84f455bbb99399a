import { createHash } from 'node:crypto';

/**
 * What makes two requests "the same" for one key (draft §2.4): method, path and query, media type and
 * body bytes. A multipart body is compared with its boundary blanked out: a client's retry of an
 * upload builds a new random boundary around the same parts.
 */
export function requestFingerprint(method: string, url: string, contentType: string, body: Buffer): string {
  const type = contentType.trim().toLowerCase();
  const boundary = /^multipart\/[^;]+;(?:.*;)?\s*boundary="?([^";]+)"?/i.exec(contentType.trim())?.[1];
  const hash = createHash('sha256').update(`${method.toUpperCase()} ${url}\n`);
  if (boundary) {
    hash.update(`${type.split(';')[0]!.trim()}\n`);
    const marker = Buffer.from(`--${boundary}`);
    let from = 0;
    for (let at = body.indexOf(marker); at >= 0; at = body.indexOf(marker, from)) {
      hash.update(body.subarray(from, at)).update('--<boundary>');
      from = at + marker.length;
    }
    hash.update(body.subarray(from));
  } else {
    hash.update(`${type}\n`).update(body);
  }
  return hash.digest('base64url');
}
