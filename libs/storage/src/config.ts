import { createHmac } from 'node:crypto';
import { ConfigError, envBool, envPort, z } from '@oan/config';
import { FilesystemStorage } from './filesystem.ts';
import { startFileListener, type FileListener } from './listener.ts';
import { S3Storage } from './s3.ts';
import type { ObjectStorage } from './types.ts';

/** Unset and empty are the same thing (`FOO=` in an env file). */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/**
 * The object-storage variables, to spread into a service's env schema
 * (`commonEnv.extend({ ...storageEnv.shape, … }).superRefine(refineStorageEnv)`).
 * `none`: no adapter, upload routes absent. `fs` (default): files on local disk, downloads
 * through the signed-URL listener on STORAGE_PORT. `s3`: S3/MinIO with presigned URLs.
 */
export const storageEnv = z.object({
  STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('fs'),
  STORAGE_DIR: z.string().min(1).default('.data/files'),
  /** Interface of the file listener; default HOST. */
  STORAGE_HOST: optional(z.string().min(1)),
  STORAGE_PORT: envPort(8183),
  /** Origin clients reach the file listener at; default `http://<STORAGE_HOST>:<port>`. */
  STORAGE_PUBLIC_URL: optional(
    z
      .string()
      .url()
      .refine((u) => /^https?:\/\//.test(u), 'must be http(s)'),
  ),
  /** HMAC key of fs download URLs; default derived from JWT_SECRET (a separate key per purpose). */
  STORAGE_SIGNING_SECRET: optional(z.string().min(32, 'must be at least 32 characters')),
  S3_ENDPOINT: optional(z.string().url()),
  /** Where clients reach the bucket when S3_ENDPOINT is an internal address (presigned URLs use it). */
  S3_PUBLIC_ENDPOINT: optional(z.string().url()),
  S3_BUCKET: optional(z.string().min(1)),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optional(z.string().min(1)),
  S3_SECRET_ACCESS_KEY: optional(z.string().min(1)),
  /** A key pair that may only read the bucket, to sign download URLs with (both or neither). */
  S3_URL_ACCESS_KEY_ID: optional(z.string().min(1)),
  S3_URL_SECRET_ACCESS_KEY: optional(z.string().min(1)),
  S3_FORCE_PATH_STYLE: envBool,
});
export type StorageEnv = z.infer<typeof storageEnv>;

const S3_REQUIRED = ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const;

/** For the service schema's superRefine: the s3 driver needs its bucket and credentials. */
export function refineStorageEnv(env: StorageEnv, ctx: z.RefinementCtx): void {
  if (env.STORAGE_DRIVER !== 's3') return;
  for (const name of S3_REQUIRED) {
    if (!env[name])
      ctx.addIssue({ code: 'custom', path: [name], message: 'required when STORAGE_DRIVER=s3' });
  }
  if (!env.S3_URL_ACCESS_KEY_ID !== !env.S3_URL_SECRET_ACCESS_KEY) {
    const missing = env.S3_URL_ACCESS_KEY_ID ? 'S3_URL_SECRET_ACCESS_KEY' : 'S3_URL_ACCESS_KEY_ID';
    ctx.addIssue({
      code: 'custom',
      path: [missing],
      message: 'S3_URL_ACCESS_KEY_ID and S3_URL_SECRET_ACCESS_KEY are set together',
    });
  }
}

export interface StorageSetup {
  storage: ObjectStorage;
  /** The fs driver's download listener; close it before the storage. */
  listener?: FileListener;
}

export interface CreateStorageOptions {
  /** Epoch ms of the URL signer (tests expire URLs without sleeping). */
  now?: () => number;
  /**
   * fs only: whether this process serves the files (default true). A process that only signs URLs
   * (matching's counterpart attachments) passes false: with the same signing secret its URLs are
   * served by the listener of the process that stores the files, at STORAGE_PUBLIC_URL (default
   * `http://<STORAGE_HOST|HOST>:<STORAGE_PORT>`).
   */
  listen?: boolean;
}

/** The configured adapter (and, for fs, its started listener), or null for `none`. */
export async function createStorage(
  config: StorageEnv & { HOST: string; JWT_SECRET: string },
  opts: CreateStorageOptions = {},
): Promise<StorageSetup | null> {
  switch (config.STORAGE_DRIVER) {
    case 'none':
      return null;
    case 'fs': {
      const host = config.STORAGE_HOST ?? config.HOST;
      const listen = opts.listen ?? true;
      const hostPart = host.includes(':') ? `[${host}]` : host;
      const publicBaseUrl =
        config.STORAGE_PUBLIC_URL ?? (listen ? undefined : `http://${hostPart}:${config.STORAGE_PORT}`);
      const storage = new FilesystemStorage({
        dir: config.STORAGE_DIR,
        secret: config.STORAGE_SIGNING_SECRET ?? deriveSigningSecret(config.JWT_SECRET),
        ...(publicBaseUrl ? { publicBaseUrl } : {}),
        ...(opts.now ? { now: opts.now } : {}),
      });
      if (!listen) return { storage };
      const listener = await startFileListener({ storage, host, port: config.STORAGE_PORT });
      return { storage, listener };
    }
    case 's3': {
      const { S3_BUCKET: bucket, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secret } = config;
      if (!bucket || !accessKeyId || !secret) {
        throw new ConfigError(
          `Invalid configuration: ${S3_REQUIRED.join(', ')} are required when STORAGE_DRIVER=s3`,
        );
      }
      const storage = new S3Storage({
        bucket,
        region: config.S3_REGION,
        accessKeyId,
        secretAccessKey: secret,
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
        ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
        ...(config.S3_PUBLIC_ENDPOINT ? { publicEndpoint: config.S3_PUBLIC_ENDPOINT } : {}),
        ...(config.S3_URL_ACCESS_KEY_ID && config.S3_URL_SECRET_ACCESS_KEY
          ? {
              urlSigning: {
                accessKeyId: config.S3_URL_ACCESS_KEY_ID,
                secretAccessKey: config.S3_URL_SECRET_ACCESS_KEY,
              },
            }
          : {}),
        ...(opts.now ? { now: opts.now } : {}),
      });
      return { storage };
    }
    default: {
      const unexpected: never = config.STORAGE_DRIVER;
      throw new ConfigError(`Unknown STORAGE_DRIVER ${String(unexpected)}`);
    }
  }
}

/** A key used only for download URLs, so a leaked URL key never signs JWTs and vice versa. */
export const deriveSigningSecret = (jwtSecret: string) =>
  createHmac('sha256', jwtSecret).update('oan/storage-url-signing/v1').digest('hex');
