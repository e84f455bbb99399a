import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  assertValidKey,
  contentDisposition,
  ObjectNotFoundError,
  type ObjectStorage,
  type PutOptions,
  type SignedUrl,
  type SignedUrlOptions,
} from './types.ts';

export interface S3StorageOptions {
  /** An S3-compatible endpoint (MinIO, …); omitted for AWS itself. */
  endpoint?: string;
  /**
   * The endpoint clients download from, when it differs from the one this process reaches (MinIO
   * as `http://minio:9000` inside compose, published elsewhere). The host is part of the signature,
   * so presigned URLs are signed for this endpoint.
   */
  publicEndpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /**
   * The key pair that signs download URLs, when it is not the one above: a key that may only read
   * this bucket, so a URL (which names its key id) and whatever leaks with it can never write or
   * list. Without it the URLs are signed with the read-write pair.
   */
  urlSigning?: { accessKeyId: string; secretAccessKey: string };
  /** `http://host/bucket/key` instead of `http://bucket.host/key` (MinIO needs it). */
  forcePathStyle: boolean;
  /** Epoch ms; only used to report `expiresAt` (SigV4 signs with the SDK's own clock). */
  now?: () => number;
}

/** SigV4 caps a presigned URL at 7 days. */
const MAX_EXPIRY_SECONDS = 7 * 24 * 3600;

/** S3 or MinIO with presigned GET URLs: the bucket stays private, the URL carries the authorization. */
export class S3Storage implements ObjectStorage {
  readonly client: S3Client;
  /** Signs the download URLs: `client`, or one aimed at `publicEndpoint` and/or with `urlSigning`'s key. */
  private readonly signer: S3Client;
  readonly bucket: string;
  private readonly now: () => number;

  constructor(opts: S3StorageOptions) {
    this.bucket = opts.bucket;
    this.now = opts.now ?? Date.now;
    const readWrite = { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey };
    const client = (endpoint: string | undefined, credentials = readWrite) =>
      new S3Client({
        region: opts.region,
        forcePathStyle: opts.forcePathStyle,
        credentials,
        ...(endpoint ? { endpoint } : {}),
        // The SDK's default CRC trailers (aws-chunked uploads) are refused by many S3-compatible stores.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    this.client = client(opts.endpoint);
    this.signer =
      opts.publicEndpoint || opts.urlSigning
        ? client(opts.publicEndpoint ?? opts.endpoint, opts.urlSigning ?? readWrite)
        : this.client;
  }

  async put(key: string, body: Buffer | Readable, opts: PutOptions): Promise<void> {
    assertValidKey(key);
    // A stream of unknown length cannot be signed for a single PUT: buffer it (uploads are ≤ 10 MB).
    const bytes = Buffer.isBuffer(body) ? body : opts.size === undefined ? await buffer(body) : body;
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentType: opts.contentType,
        ContentLength: Buffer.isBuffer(bytes) ? bytes.length : opts.size,
        ...(opts.fileName ? { ContentDisposition: contentDisposition(opts.fileName) } : {}),
      }),
    );
  }

  async get(key: string): Promise<Buffer> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) throw new ObjectNotFoundError(key);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(key);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      // S3 answers 204 for a missing key; some compatible stores answer 404.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async signedUrl(key: string, opts: SignedUrlOptions): Promise<SignedUrl> {
    assertValidKey(key);
    const expiresIn = Math.min(Math.max(1, Math.floor(opts.expiresInSeconds)), MAX_EXPIRY_SECONDS);
    const issuedAt = this.now();
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(opts.fileName ? { ResponseContentDisposition: contentDisposition(opts.fileName) } : {}),
      ...(opts.contentType ? { ResponseContentType: opts.contentType } : {}),
    });
    const url = await getSignedUrl(this.signer, command, {
      expiresIn,
      signingDate: new Date(issuedAt),
    });
    return { url, expiresAt: issuedAt + expiresIn * 1000 };
  }

  async close(): Promise<void> {
    this.client.destroy();
    if (this.signer !== this.client) this.signer.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
