import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertValidKey,
  isValidKey,
  ObjectNotFoundError,
  sanitizeFileName,
  type ObjectStorage,
  type PutOptions,
  type SignedUrl,
  type SignedUrlOptions,
} from './types.ts';

export interface FilesystemStorageOptions {
  /** Root directory: `objects/<key>` holds the bytes, `meta/<key>.json` their type and name. */
  dir: string;
  /** HMAC key of the download URLs (at least 32 characters). */
  secret: string;
  /** Origin of the file listener, e.g. `http://127.0.0.1:8183`; set by the listener when omitted. */
  publicBaseUrl?: string;
  /** Epoch ms; tests move it to expire URLs without sleeping. */
  now?: () => number;
}

interface StoredMeta {
  contentType: string;
  fileName: string;
  size: number;
}

export interface OpenedObject extends StoredMeta {
  stream: Readable;
}

/** What a signed request is: `forbidden` never says whether the key exists. */
export type SignatureCheck = 'valid' | 'forbidden';

/**
 * Local-disk object storage with HMAC-signed expiring URLs, served by its own listener
 * (`startFileListener`), never by the API origin: the URL alone authorizes the download.
 */
export class FilesystemStorage implements ObjectStorage {
  readonly dir: string;
  private readonly secret: string;
  private baseUrl: string | undefined;
  readonly now: () => number;

  constructor(opts: FilesystemStorageOptions) {
    if (opts.secret.length < 32) throw new Error('FilesystemStorage secret must be at least 32 characters');
    this.dir = opts.dir;
    this.secret = opts.secret;
    this.baseUrl = opts.publicBaseUrl?.replace(/\/+$/, '');
    this.now = opts.now ?? Date.now;
  }

  get publicBaseUrl(): string | undefined {
    return this.baseUrl;
  }

  /** Used by the listener when no public URL was configured (it then serves at its own address). */
  bindPublicBaseUrl(url: string): void {
    this.baseUrl ??= url.replace(/\/+$/, '');
  }

  async put(key: string, body: Buffer | Readable, opts: PutOptions): Promise<void> {
    const target = this.objectPath(key);
    const tmpDir = join(this.dir, 'tmp');
    await Promise.all([mkdir(tmpDir, { recursive: true }), mkdir(dirname(target), { recursive: true })]);
    // Written aside then renamed: a reader never sees half a file, a failed write leaves nothing.
    const tmp = join(tmpDir, randomUUID());
    try {
      if (Buffer.isBuffer(body)) await writeFile(tmp, body, { flag: 'wx' });
      else await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
      const { size } = await stat(tmp);
      const meta: StoredMeta = {
        contentType: opts.contentType,
        fileName: sanitizeFileName(opts.fileName, key.split('/').pop()),
        size,
      };
      const metaPath = this.metaPath(key);
      await mkdir(dirname(metaPath), { recursive: true });
      await writeFile(metaPath, JSON.stringify(meta));
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      return await readFile(this.objectPath(key));
    } catch (err) {
      if (isMissing(err)) throw new ObjectNotFoundError(key);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.objectPath(key), { force: true });
    await rm(this.metaPath(key), { force: true });
  }

  /**
   * The signature covers `${key}\n${exp}` only, so the type and name served are the ones stored by
   * `put`; `fileName`/`contentType` here are not needed (S3 signs them into its URL instead).
   */
  async signedUrl(key: string, opts: SignedUrlOptions): Promise<SignedUrl> {
    assertValidKey(key);
    if (!this.baseUrl) throw new Error('FilesystemStorage has no public base URL (start its listener)');
    const exp = Math.ceil((this.now() + opts.expiresInSeconds * 1000) / 1000);
    const query = new URLSearchParams({ exp: String(exp), sig: this.sign(key, exp) });
    return { url: `${this.baseUrl}/files/${key}?${query.toString()}`, expiresAt: exp * 1000 };
  }

  async close(): Promise<void> {}

  /** Signature first, then expiry; both failures look the same to the caller. */
  verify(key: string, expText: string | null, sig: string | null): SignatureCheck {
    if (!isValidKey(key) || !expText || !/^\d{1,12}$/.test(expText) || !sig || !/^[0-9a-f]{64}$/.test(sig)) {
      return 'forbidden';
    }
    const expected = Buffer.from(this.sign(key, Number(expText)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'forbidden';
    return this.now() < Number(expText) * 1000 ? 'valid' : 'forbidden';
  }

  /** The stored object with its metadata, or null when the key holds nothing. */
  async open(key: string): Promise<OpenedObject | null> {
    try {
      const meta = JSON.parse(await readFile(this.metaPath(key), 'utf8')) as StoredMeta;
      const { size } = await stat(this.objectPath(key));
      return { ...meta, size, stream: createReadStream(this.objectPath(key)) };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  private sign(key: string, exp: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${exp}`).digest('hex');
  }

  private objectPath(key: string): string {
    assertValidKey(key);
    return join(this.dir, 'objects', ...key.split('/'));
  }

  private metaPath(key: string): string {
    assertValidKey(key);
    return `${join(this.dir, 'meta', ...key.split('/'))}.json`;
  }
}

const isMissing = (err: unknown) =>
  typeof err === 'object' &&
  err !== null &&
  ['ENOENT', 'ENOTDIR'].includes((err as { code?: string }).code ?? '');
