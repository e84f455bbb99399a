import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectNotFoundError, S3Storage } from '../src';

// No MinIO here (no Docker): the presigned URL is checked for its SigV4 shape, and the object calls
// run against a tiny in-process fake that speaks the path-style subset of the S3 REST API.
const KEY = 'g-1/0b6c1d2e-9f5a-4c1e-8a3b-2d4e6f8a0b1c';
const base = {
  bucket: 'oan-files',
  region: 'eu-west-1',
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'x'.repeat(40),
};

describe('S3Storage presigned URLs', () => {
  it('are path-style SigV4 GET URLs on the endpoint, valid for the asked lifetime', async () => {
    const now = Date.parse('2026-08-01T10:00:00.000Z');
    const s3 = new S3Storage({
      ...base,
      endpoint: 'http://minio.test:9000',
      forcePathStyle: true,
      now: () => now,
    });
    const { url, expiresAt } = await s3.signedUrl(KEY, {
      expiresInSeconds: 3600,
      fileName: 'cv.pdf',
      contentType: 'application/pdf',
    });
    const u = new URL(url);
    expect(u.origin).toBe('http://minio.test:9000');
    expect(u.pathname).toBe(`/oan-files/${KEY}`);
    const q = u.searchParams;
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20260801/eu-west-1/s3/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20260801T100000Z');
    expect(q.get('X-Amz-Expires')).toBe('3600');
    expect(q.get('X-Amz-SignedHeaders')).toBe('host');
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(q.get('response-content-type')).toBe('application/pdf');
    expect(q.get('response-content-disposition')).toContain('filename="cv.pdf"');
    expect(url).not.toContain(base.secretAccessKey);
    expect(expiresAt).toBe(now + 3600_000);
    await s3.close();
  });

  it('uses virtual-hosted style when path style is off, and caps the lifetime at 7 days', async () => {
    const s3 = new S3Storage({ ...base, endpoint: 'https://s3.example.test', forcePathStyle: false });
    const { url, expiresAt } = await s3.signedUrl(KEY, { expiresInSeconds: 30 * 24 * 3600 });
    const u = new URL(url);
    expect(u.host).toBe('oan-files.s3.example.test');
    expect(u.pathname).toBe(`/${KEY}`);
    expect(u.searchParams.get('X-Amz-Expires')).toBe(String(7 * 24 * 3600));
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600_000);
    await s3.close();
  });

  it('signs for S3_PUBLIC_ENDPOINT when the bucket is reached internally under another name', async () => {
    const s3 = new S3Storage({
      ...base,
      endpoint: 'http://minio:9000',
      publicEndpoint: 'https://files.example.test',
      forcePathStyle: true,
    });
    const u = new URL((await s3.signedUrl(KEY, { expiresInSeconds: 60 })).url);
    expect(u.origin).toBe('https://files.example.test');
    expect(u.pathname).toBe(`/oan-files/${KEY}`);
    await s3.close();
  });

  it('refuses a traversal key before signing anything', async () => {
    const s3 = new S3Storage({ ...base, endpoint: 'http://minio.test:9000', forcePathStyle: true });
    await expect(s3.signedUrl('../other-bucket/x', { expiresInSeconds: 60 })).rejects.toThrow(
      'Invalid storage key',
    );
    await s3.close();
  });
});

describe('S3Storage object calls (against a fake S3 endpoint)', () => {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const seen: { method: string; path: string; auth: string }[] = [];
  let server: Server;
  let s3: S3Storage;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = decodeURIComponent((req.url ?? '').split('?')[0]!);
      seen.push({ method: req.method ?? '', path, auth: req.headers.authorization ?? '' });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'PUT') {
          objects.set(path, { body: Buffer.concat(chunks), type: String(req.headers['content-type']) });
          res.writeHead(200, { etag: '"1"' }).end();
        } else if (req.method === 'GET') {
          const o = objects.get(path);
          if (!o) {
            res.writeHead(404, { 'content-type': 'application/xml' });
            res.end('<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>');
          } else res.writeHead(200, { 'content-type': o.type, 'content-length': o.body.length }).end(o.body);
        } else if (req.method === 'DELETE') {
          objects.delete(path);
          res.writeHead(204).end();
        } else res.writeHead(405).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    s3 = new S3Storage({ ...base, endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true });
  });
  afterAll(async () => {
    await s3?.close();
    await new Promise((r) => server.close(r));
  });

  it('puts (buffer or stream), gets the same bytes, and deletes, all signed', async () => {
    const bytes = Buffer.from('%PDF-1.4 fake');
    await s3.put(KEY, bytes, { contentType: 'application/pdf', fileName: 'cv.pdf' });
    expect(objects.get(`/oan-files/${KEY}`)).toEqual({ body: bytes, type: 'application/pdf' });
    expect((await s3.get(KEY)).equals(bytes)).toBe(true);
    await s3.put(`${KEY}x`, Readable.from([Buffer.from('a'), Buffer.from('bc')]), {
      contentType: 'text/plain',
    });
    expect(objects.get(`/oan-files/${KEY}x`)?.body.toString()).toBe('abc');
    await s3.delete(KEY);
    await s3.delete(KEY);
    await expect(s3.get(KEY)).rejects.toThrow(ObjectNotFoundError);
    expect(seen.every((r) => r.auth.startsWith('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/'))).toBe(true);
  });
});
