import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, z } from '@oan/config';
import {
  createStorage,
  deriveSigningSecret,
  FilesystemStorage,
  refineStorageEnv,
  S3Storage,
  storageEnv,
} from '../src/index.ts';

const JWT_SECRET = 'storage-config-test-secret-storage-config';
const schema = storageEnv.extend({ HOST: z.string().default('127.0.0.1') }).superRefine(refineStorageEnv);
const load = (env: Record<string, string>) => ({ ...loadConfig(schema, env), JWT_SECRET });

describe('storage configuration', () => {
  it('defaults to the filesystem driver with its own listener on 8183', () => {
    const c = load({});
    expect(c).toMatchObject({ STORAGE_DRIVER: 'fs', STORAGE_DIR: '.data/files', STORAGE_PORT: 8183 });
    expect(c.STORAGE_SIGNING_SECRET).toBeUndefined();
  });

  it('`none` creates no adapter (upload routes stay absent)', async () => {
    expect(await createStorage(load({ STORAGE_DRIVER: 'none' }))).toBeNull();
  });

  it('`fs` starts the listener and signs with a key derived from JWT_SECRET unless one is set', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oan-storage-cfg-'));
    const setup = await createStorage(load({ STORAGE_DIR: dir, STORAGE_PORT: '0' }));
    try {
      expect(setup?.storage).toBeInstanceOf(FilesystemStorage);
      const fs = setup!.storage as FilesystemStorage;
      expect(fs.publicBaseUrl).toBe(setup!.listener!.url);
      expect((await fetch(`${setup!.listener!.url}/health`)).status).toBe(200);
      expect(deriveSigningSecret(JWT_SECRET)).toMatch(/^[0-9a-f]{64}$/);
      expect(deriveSigningSecret(JWT_SECRET)).not.toContain(JWT_SECRET);
    } finally {
      await setup?.listener?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('`fs` advertises STORAGE_PUBLIC_URL when set (a proxy in front of the listener)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oan-storage-cfg-'));
    const setup = await createStorage(
      load({ STORAGE_DIR: dir, STORAGE_PORT: '0', STORAGE_PUBLIC_URL: 'https://files.example.test/' }),
    );
    try {
      const { url } = await setup!.storage.signedUrl('g/a', { expiresInSeconds: 60 });
      expect(url.startsWith('https://files.example.test/files/g/a?exp=')).toBe(true);
    } finally {
      await setup?.listener?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('`fs` with listen:false starts no listener and signs URLs the storing process serves', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oan-storage-cfg-'));
    const served = await createStorage(load({ STORAGE_DIR: dir, STORAGE_PORT: '0' }));
    try {
      const port = served!.listener!.port;
      const signer = await createStorage(load({ STORAGE_DIR: dir, STORAGE_PORT: String(port) }), {
        listen: false,
      });
      expect(signer?.listener).toBeUndefined();
      await served!.storage.put('g/a', Buffer.from('hello'), { contentType: 'text/plain' });
      const { url } = await signer!.storage.signedUrl('g/a', { expiresInSeconds: 60 });
      expect(url.startsWith(`http://127.0.0.1:${port}/files/g/a?exp=`)).toBe(true);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('hello');
    } finally {
      await served?.listener?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('`s3` needs a bucket and credentials, and then builds the S3 adapter', async () => {
    expect(() => load({ STORAGE_DRIVER: 's3' })).toThrow(
      /S3_BUCKET.*\n.*S3_ACCESS_KEY_ID.*\n.*S3_SECRET_ACCESS_KEY/,
    );
    const setup = await createStorage(
      load({
        STORAGE_DRIVER: 's3',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_BUCKET: 'b',
        S3_ACCESS_KEY_ID: 'k',
        S3_SECRET_ACCESS_KEY: 's',
        S3_FORCE_PATH_STYLE: 'true',
      }),
    );
    expect(setup?.storage).toBeInstanceOf(S3Storage);
    expect(setup?.listener).toBeUndefined();
    await setup?.storage.close();
  });

  it('signs `s3` download URLs with the read-only pair when one is set, and wants both halves', async () => {
    const env = {
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_BUCKET: 'b',
      S3_ACCESS_KEY_ID: 'readwrite',
      S3_SECRET_ACCESS_KEY: 's',
      S3_FORCE_PATH_STYLE: 'true',
    };
    expect(() => load({ ...env, S3_URL_ACCESS_KEY_ID: 'readonly' })).toThrow(/S3_URL_SECRET_ACCESS_KEY/);
    expect(() => load({ ...env, S3_URL_SECRET_ACCESS_KEY: 'r' })).toThrow(/S3_URL_ACCESS_KEY_ID/);
    const setup = await createStorage(
      load({ ...env, S3_URL_ACCESS_KEY_ID: 'readonly', S3_URL_SECRET_ACCESS_KEY: 'r' }),
    );
    const { url } = await setup!.storage.signedUrl('g/a', { expiresInSeconds: 60 });
    expect(new URL(url).searchParams.get('X-Amz-Credential')).toMatch(/^readonly\//);
    await setup?.storage.close();
  });

  it('refuses a short signing secret and an unknown driver', () => {
    expect(() => load({ STORAGE_SIGNING_SECRET: 'short' })).toThrow(/STORAGE_SIGNING_SECRET/);
    expect(() => load({ STORAGE_DRIVER: 'ftp' })).toThrow(/STORAGE_DRIVER/);
  });
});
