import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDisposition, ObjectNotFoundError, S3Storage, type S3StorageOptions } from '../src/index.ts';

/**
 * The S3 adapter against a real S3-compatible server: S3Proxy (org.gaul:s3proxy from Maven Central,
 * started by infra/s3proxy/start.sh on 127.0.0.1:9300, objects on the local filesystem). It verifies
 * SigV4 on every call and on presigned URLs, so signing, tampering and expiry are the server's verdicts.
 */
const PORT = Number(process.env.S3PROXY_PORT ?? 9300);
const ENDPOINT = `http://127.0.0.1:${PORT}`;
const START = fileURLToPath(new URL('../../../infra/s3proxy/start.sh', import.meta.url));
const BUCKET = `oan-int-${randomUUID()}`;
const options: S3StorageOptions = {
  endpoint: ENDPOINT,
  bucket: BUCKET,
  region: 'us-east-1',
  accessKeyId: 'local-identity',
  secretAccessKey: 'local-credential',
  forcePathStyle: true,
};
const OAN_KEY = `oan_${randomBytes(24).toString('hex')}`;

let storage: S3Storage;
const others: S3Storage[] = [];
const withOptions = (extra: Partial<S3StorageOptions>) => {
  const s = new S3Storage({ ...options, ...extra });
  others.push(s);
  return s;
};

beforeAll(async () => {
  // `npm test` ran infra/up.sh already; a lone run starts S3Proxy itself (idempotent).
  if (process.env.OAN_INFRA_READY !== '1') execFileSync('bash', [START], { stdio: 'inherit' });
  storage = new S3Storage(options);
  await storage.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
afterAll(async () => {
  if (storage) {
    const listed = await storage.client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    for (const { Key } of listed.Contents ?? []) {
      await storage.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
    }
    await storage.client.send(new DeleteBucketCommand({ Bucket: BUCKET }));
    await expect(storage.client.send(new HeadBucketCommand({ Bucket: BUCKET }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
  }
  await Promise.all([storage, ...others].map((s) => s?.close()));
});

const newKey = () => `${randomUUID()}/${randomUUID()}`;

async function stored(bytes: Buffer, contentType = 'application/pdf', fileName = 'cv.pdf') {
  const key = newKey();
  await storage.put(key, bytes, { contentType, fileName });
  return key;
}

/** A plain GET, as a browser or connector follows the URL: status, headers, bytes, S3 error code. */
async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  const code = res.status === 200 ? undefined : /<Code>([^<]+)<\/Code>/.exec(body.toString())?.[1];
  const message = res.status === 200 ? undefined : /<Message>([^<]*)<\/Message>/.exec(body.toString())?.[1];
  return { status: res.status, headers: res.headers, body, code, message };
}

/** Waits until the wall clock is just past a whole second (X-Amz-Date has second precision). */
async function atSecondStart(): Promise<void> {
  while (Date.now() % 1000 > 50) await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 1));
}

describe('S3Storage objects on S3Proxy', () => {
  it('puts a 1 MiB binary buffer and gets the exact bytes back', async () => {
    const bytes = randomBytes(1024 * 1024);
    const key = await stored(bytes, 'image/png', 'photo.png');
    const got = await storage.get(key);
    expect(got.length).toBe(bytes.length);
    expect(got.equals(bytes)).toBe(true);
  });

  it('puts a stream of known size as it comes, and one of unknown size buffered', async () => {
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(200_000)];
    const whole = Buffer.concat(parts);
    const sized = newKey();
    await storage.put(sized, Readable.from(parts), { contentType: 'application/pdf', size: whole.length });
    expect((await storage.get(sized)).equals(whole)).toBe(true);
    const unsized = newKey();
    await storage.put(unsized, Readable.from(parts), { contentType: 'text/plain' });
    expect((await storage.get(unsized)).equals(whole)).toBe(true);
  });

  it('overwrites a key with the new bytes', async () => {
    const key = await stored(Buffer.from('first'));
    await storage.put(key, Buffer.from('second'), { contentType: 'text/plain' });
    expect((await storage.get(key)).toString()).toBe('second');
  });

  it('answers ObjectNotFoundError for a missing key; deleting one is not an error', async () => {
    const key = newKey();
    await expect(storage.get(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(storage.get(key)).rejects.toMatchObject({ key });
    await expect(storage.delete(key)).resolves.toBeUndefined();
  });

  it('deletes: the bytes are gone and a second delete is a no-op', async () => {
    const key = await stored(Buffer.from('short-lived'));
    await storage.delete(key);
    await expect(storage.get(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(storage.delete(key)).resolves.toBeUndefined();
  });

  it('refuses a traversal key before any request', async () => {
    await expect(storage.put('../x', Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(
      'Invalid storage key',
    );
    await expect(storage.get(`${BUCKET}/../x`)).rejects.toThrow('Invalid storage key');
  });
});

describe('S3Storage presigned URLs on S3Proxy', () => {
  it('download the exact bytes with no credentials, as the type and file name asked', async () => {
    const bytes = randomBytes(300_000);
    const key = await stored(bytes, 'application/octet-stream', 'stored-name.bin');
    const fileName = 'Lebenslauf – Jürgen "final".pdf';
    const before = Date.now();
    const { url, expiresAt } = await storage.signedUrl(key, {
      expiresInSeconds: 600,
      fileName,
      contentType: 'application/pdf',
    });
    expect(url.startsWith(`${ENDPOINT}/${BUCKET}/${key}?`)).toBe(true);
    expect(url).not.toContain(options.secretAccessKey);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
    const res = await download(url);
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(contentDisposition(fileName));
    expect(res.headers.get('content-disposition')).toContain(
      `filename*=UTF-8''Lebenslauf%20%E2%80%93%20J%C3%BCrgen%20%22final%22.pdf`,
    );
  });

  it('serve the type and name stored by put when the URL asks none', async () => {
    const bytes = Buffer.from('%PDF-1.4 stored metadata\n');
    const key = await stored(bytes, 'application/pdf', 'brief.pdf');
    const res = await download((await storage.signedUrl(key, { expiresInSeconds: 60 })).url);
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(contentDisposition('brief.pdf'));
  });

  it('ignore an OAN bearer token sent along: the URL alone authorizes', async () => {
    const bytes = randomBytes(4096);
    const key = await stored(bytes);
    const { url } = await storage.signedUrl(key, { expiresInSeconds: 60, fileName: 'cv.pdf' });
    const res = await download(url, { authorization: `Bearer ${OAN_KEY}` });
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
  });

  it('are refused (403) when the key is changed to another existing object', async () => {
    const mine = await stored(randomBytes(100));
    const secret = `their bytes ${randomUUID()}`;
    const theirs = await stored(Buffer.from(secret), 'text/plain', 'theirs.txt');
    const { url } = await storage.signedUrl(mine, { expiresInSeconds: 60 });
    expect((await download(url)).status).toBe(200);
    const res = await download(url.replace(`/${mine}?`, `/${theirs}?`));
    expect(res).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(res.body.toString()).not.toContain(secret);
  });

  it('are refused (403) when X-Amz-Expires or a signed response header is changed', async () => {
    const key = await stored(randomBytes(100));
    const { url } = await storage.signedUrl(key, {
      expiresInSeconds: 60,
      fileName: 'cv.pdf',
      contentType: 'application/pdf',
    });
    const longer = new URL(url);
    expect(longer.searchParams.get('X-Amz-Expires')).toBe('60');
    longer.searchParams.set('X-Amz-Expires', '604800');
    expect(await download(longer.href)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    const html = new URL(url);
    html.searchParams.set('response-content-type', 'text/html');
    expect(await download(html.href)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    const unsigned = new URL(url);
    unsigned.searchParams.delete('X-Amz-Signature');
    expect((await download(unsigned.href)).status).toBe(403);
  });

  it('work until their lifetime ends, then are refused (403): a 1 s URL, waited out', async () => {
    const bytes = randomBytes(100);
    const key = await stored(bytes);
    await atSecondStart();
    const { url, expiresAt } = await storage.signedUrl(key, { expiresInSeconds: 1 });
    const fresh = await download(url);
    expect(fresh.status).toBe(200);
    expect(fresh.body.equals(bytes)).toBe(true);
    await new Promise((r) => setTimeout(r, expiresAt + 1100 - Date.now()));
    expect(await download(url)).toMatchObject({
      status: 403,
      code: 'AccessDenied',
      message: 'Request has expired',
    });
  });

  it('signed with an earlier clock are already expired (403)', async () => {
    const key = await stored(randomBytes(100));
    const past = withOptions({ now: () => Date.now() - 120_000 });
    const { url, expiresAt } = await past.signedUrl(key, { expiresInSeconds: 60 });
    expect(expiresAt).toBeLessThan(Date.now());
    expect(await download(url)).toMatchObject({ status: 403, message: 'Request has expired' });
  });

  it("answer 404 once the object is deleted (the signature is still good, the bytes aren't)", async () => {
    const key = await stored(randomBytes(100));
    const { url } = await storage.signedUrl(key, { expiresInSeconds: 60 });
    expect((await download(url)).status).toBe(200);
    await storage.delete(key);
    expect(await download(url)).toMatchObject({ status: 404, code: 'NoSuchKey' });
  });

  it('are the only way in: an anonymous GET of the object is refused (403)', async () => {
    const key = await stored(randomBytes(100));
    const res = await download(`${ENDPOINT}/${BUCKET}/${key}`);
    expect(res).toMatchObject({ status: 403, code: 'AccessDenied' });
    const bearer = await download(`${ENDPOINT}/${BUCKET}/${key}`, { authorization: `Bearer ${OAN_KEY}` });
    expect(bearer.status).toBe(403);
  });

  it('signed for S3_PUBLIC_ENDPOINT download from the public host, and only from it', async () => {
    const bytes = randomBytes(50_000);
    const key = await stored(bytes);
    const publicEndpoint = `http://localhost:${PORT}`;
    const s3 = withOptions({ publicEndpoint });
    const { url } = await s3.signedUrl(key, { expiresInSeconds: 60, fileName: 'cv.pdf' });
    expect(new URL(url).origin).toBe(publicEndpoint);
    const res = await download(url);
    expect(res.status).toBe(200);
    expect(res.body.equals(bytes)).toBe(true);
    // The host is signed: the same URL on the internal name is refused.
    const internal = url.replace(publicEndpoint, ENDPOINT);
    expect(await download(internal)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    // Object calls still go to the internal endpoint.
    expect((await s3.get(key)).equals(bytes)).toBe(true);
  });
});

describe('S3Storage with wrong credentials', () => {
  it('is refused on every call, and a 403 is never taken for a missing object', async () => {
    const key = await stored(Buffer.from('private'));
    const wrong = withOptions({ secretAccessKey: 'not-the-credential' });
    await expect(wrong.put(newKey(), Buffer.from('x'), { contentType: 'text/plain' })).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    const read = wrong.get(key);
    await expect(read).rejects.not.toBeInstanceOf(ObjectNotFoundError);
    await expect(read).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    await expect(wrong.delete(key)).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect((await storage.get(key)).toString()).toBe('private');
    const { url } = await wrong.signedUrl(key, { expiresInSeconds: 60 });
    expect(await download(url)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
  });

  it('an unknown access key id is refused too', async () => {
    const key = await stored(Buffer.from('private'));
    const stranger = withOptions({ accessKeyId: 'someone-else' });
    await expect(stranger.get(key)).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    const { url } = await stranger.signedUrl(key, { expiresInSeconds: 60 });
    expect((await download(url)).status).toBe(403);
  });
});
