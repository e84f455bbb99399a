import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FilesystemStorage,
  InvalidKeyError,
  ObjectNotFoundError,
  startFileListener,
  type FileListener,
} from '../src/index.ts';

const SECRET = 'storage-test-secret-storage-test-secret';
let dir: string;
let storage: FilesystemStorage;
let listener: FileListener;
let offset = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oan-storage-'));
  storage = new FilesystemStorage({ dir, secret: SECRET, now: () => Date.now() + offset });
  listener = await startFileListener({ storage, host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await listener?.close();
  await rm(dir, { recursive: true, force: true });
});

const newKey = () => `${randomUUID()}/${randomUUID()}`;
const FORBIDDEN = { error: 'Forbidden', code: 'FORBIDDEN' };

async function stored(bytes: Buffer, contentType = 'application/pdf', fileName = 'cv.pdf') {
  const key = newKey();
  await storage.put(key, bytes, { contentType, fileName });
  return key;
}

/** A GET with the path sent exactly as given (fetch would normalize `..` away). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: listener.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a signed download URL', () => {
  it('serves the exact bytes with the stored type and file name, without any credential', async () => {
    const bytes = randomBytes(300_000);
    const key = await stored(bytes, 'application/pdf', '../secret/简历.pdf');
    const { url, expiresAt } = await storage.signedUrl(key, { expiresInSeconds: 3600 });
    expect(url.startsWith(`${listener.url}/files/${key}?`)).toBe(true);
    expect(expiresAt).toBeGreaterThan(Date.now() + 3599_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3601_000);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="__.pdf"; filename*=UTF-8''%E7%AE%80%E5%8E%86.pdf`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('ignores an Authorization header, which never replaces the signature', async () => {
    const key = await stored(Buffer.from('hello'));
    const { url } = await storage.signedUrl(key, { expiresInSeconds: 60 });
    const withJunk = await fetch(url, { headers: { authorization: 'Bearer gofers_deadbeef' } });
    expect(withJunk.status).toBe(200);
    expect(await withJunk.text()).toBe('hello');
    const unsigned = await fetch(`${listener.url}/files/${key}`, {
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(unsigned.status).toBe(403);
    expect(await unsigned.json()).toEqual(FORBIDDEN);
  });

  it('stops working once expired (clock moved, no sleep)', async () => {
    const key = await stored(Buffer.from('soon gone'));
    const { url, expiresAt } = await storage.signedUrl(key, { expiresInSeconds: 5 });
    expect((await fetch(url)).status).toBe(200);
    offset += expiresAt - Date.now() + 1;
    try {
      const res = await fetch(url);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(FORBIDDEN);
    } finally {
      offset = 0;
    }
  });

  it('refuses a tampered key, expiry or signature with the same 403 whether or not the key exists', async () => {
    const key = await stored(Buffer.from('mine'));
    const other = await stored(Buffer.from('someone else'));
    const { url } = await storage.signedUrl(key, { expiresInSeconds: 60 });
    const u = new URL(url);
    const exp = u.searchParams.get('exp')!;
    const sig = u.searchParams.get('sig')!;
    const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1);
    const attempts = [
      `/files/${other}?exp=${exp}&sig=${sig}`,
      `/files/${newKey()}?exp=${exp}&sig=${sig}`,
      `/files/${key}?exp=${Number(exp) + 3600}&sig=${sig}`,
      `/files/${key}?exp=${exp}&sig=${flipped}`,
      `/files/${key}?exp=${exp}&sig=${sig.toUpperCase()}`,
      `/files/${key}?exp=${exp}`,
      `/files/${key}?sig=${sig}`,
      `/files/${key}?exp=${exp}&sig=${sig.slice(0, 62)}`,
    ];
    for (const path of attempts) {
      const res = await rawGet(path);
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(JSON.parse(res.body)).toEqual(FORBIDDEN);
    }
  });

  it('answers 404 only to a correctly signed URL whose object is gone', async () => {
    const key = await stored(Buffer.from('deleted soon'));
    const { url } = await storage.signedUrl(key, { expiresInSeconds: 60 });
    await storage.delete(key);
    const res = await fetch(url);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not Found', code: 'NOT_FOUND' });
  });

  it('refuses path traversal before touching the disk', async () => {
    const key = await stored(Buffer.from('x'));
    const metaFile = `meta/${key}.json`;
    for (const path of [
      `/files/../${metaFile}?exp=1&sig=${'0'.repeat(64)}`,
      `/files/${key.split('/')[0]}/..%2F..%2F${metaFile}`,
      `/files/%2e%2e/%2e%2e/etc/passwd`,
      `/files/..\\..\\etc\\passwd`,
    ]) {
      expect((await rawGet(path)).status).toBe(403);
    }
    await expect(storage.put('../escape', Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(
      InvalidKeyError,
    );
    await expect(storage.signedUrl('a/../b', { expiresInSeconds: 60 })).rejects.toThrow(InvalidKeyError);
    expect(await readdir(dir)).not.toContain('escape');
  });
});

describe('the filesystem adapter', () => {
  it('stores a stream, reads it back, and deletes a missing key quietly', async () => {
    const key = newKey();
    const bytes = randomBytes(70_000);
    await storage.put(key, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), {
      contentType: 'image/png',
    });
    expect((await storage.get(key)).equals(bytes)).toBe(true);
    await storage.delete(key);
    await storage.delete(key);
    await expect(storage.get(key)).rejects.toThrow(ObjectNotFoundError);
  });

  it('leaves nothing behind when the body fails midway', async () => {
    const key = newKey();
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1000));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put(key, failing, { contentType: 'text/plain' })).rejects.toThrow(
      'client went away',
    );
    await expect(storage.get(key)).rejects.toThrow(ObjectNotFoundError);
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });

  it('refuses a short secret', () => {
    expect(() => new FilesystemStorage({ dir, secret: 'short' })).toThrow(/32 characters/);
  });
});
