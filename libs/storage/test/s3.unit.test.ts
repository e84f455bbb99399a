import { describe, expect, it } from 'vitest';
import { S3Storage } from '../src/index.ts';

// The presigned URL's SigV4 shape, computed offline (no server; the hosts below do not exist). The
// object calls, and what a real S3-compatible server makes of these URLs, are s3.int.test.ts's (S3Proxy).
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

  it('names the read-only key, not the read-write one, when URLs have a key of their own', async () => {
    const s3 = new S3Storage({
      ...base,
      endpoint: 'http://minio.test:9000',
      forcePathStyle: true,
      urlSigning: { accessKeyId: 'AKIDREADONLY', secretAccessKey: 'y'.repeat(40) },
    });
    const u = new URL((await s3.signedUrl(KEY, { expiresInSeconds: 60 })).url);
    expect(u.origin).toBe('http://minio.test:9000');
    expect(u.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDREADONLY\//);
    expect(u.toString()).not.toContain('AKIDEXAMPLE');
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
