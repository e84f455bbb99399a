import type { Readable } from 'node:stream';

export interface PutOptions {
  contentType: string;
  /** Byte length when known (an S3 stream upload needs it; otherwise the body is buffered). */
  size?: number;
  /** Served as the download name (sanitized again when served). */
  fileName?: string;
}

export interface SignedUrlOptions {
  expiresInSeconds: number;
  fileName?: string;
  contentType?: string;
}

export interface SignedUrl {
  /** Absolute, self-authorizing: fetched without any Authorization header. */
  url: string;
  /** Epoch milliseconds (the protocol's form for attachment URL expiry). */
  expiresAt: number;
}

/** Where uploaded bytes live. Keys are chosen by the caller (`<goferId>/<uuid>`), never by a client. */
export interface ObjectStorage {
  put(key: string, body: Buffer | Readable, opts: PutOptions): Promise<void>;
  /** The stored bytes; `ObjectNotFoundError` when there are none. */
  get(key: string): Promise<Buffer>;
  /** A missing key is not an error (deletion is best-effort cleanup after a Gofer is deleted). */
  delete(key: string): Promise<void>;
  signedUrl(key: string, opts: SignedUrlOptions): Promise<SignedUrl>;
  close(): Promise<void>;
}

export class ObjectNotFoundError extends Error {
  override readonly name = 'ObjectNotFoundError';
  readonly key: string;
  constructor(key: string) {
    super(`No stored object for key ${key}`);
    this.key = key;
  }
}

export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
  constructor() {
    super('Invalid storage key');
  }
}

// 1–4 segments of [A-Za-z0-9_-]: no dots at all, so no `..`, no hidden files, nothing to normalize.
const KEY = /^[A-Za-z0-9_-]{1,128}(\/[A-Za-z0-9_-]{1,128}){0,3}$/;

export const isValidKey = (key: string): boolean => KEY.test(key);

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new InvalidKeyError();
}

const MAX_NAME = 200;
// C0/C1 controls, DEL, and the bidi overrides that disguise extensions (`evil\u202Efdp.exe`).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A client's file name as stored and shown: no directory part, no control or bidi characters,
 * trimmed, at most 200 characters (the extension kept), never empty.
 */
export function sanitizeFileName(raw: string | undefined, fallback = 'file'): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  let name = base.replace(UNSAFE, '').replace(/\s+/g, ' ').trim();
  if (name === '' || name === '.' || name === '..') return fallback;
  if ([...name].length > MAX_NAME) {
    const chars = [...name];
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? [...name.slice(dot)] : [];
    name = chars.slice(0, MAX_NAME - ext.length).join('') + ext.join('');
  }
  return name;
}

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name. */
export function contentDisposition(fileName: string): string {
  const safe = sanitizeFileName(fileName);
  const ascii = safe.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(safe)}`;
}

const encodeRfc5987 = (s: string) =>
  encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
