export {
  assertValidKey,
  contentDisposition,
  InvalidKeyError,
  isValidKey,
  ObjectNotFoundError,
  sanitizeFileName,
  type ObjectStorage,
  type PutOptions,
  type SignedUrl,
  type SignedUrlOptions,
} from './types.ts';
export {
  FilesystemStorage,
  type FilesystemStorageOptions,
  type OpenedObject,
  type SignatureCheck,
} from './filesystem.ts';
export { startFileListener, type FileListener, type FileListenerOptions } from './listener.ts';
export { S3Storage, type S3StorageOptions } from './s3.ts';
export {
  createStorage,
  deriveSigningSecret,
  refineStorageEnv,
  storageEnv,
  type CreateStorageOptions,
  type StorageEnv,
  type StorageSetup,
} from './config.ts';
export {
  contentMatches,
  declaredMime,
  DOCUMENT_MIMES,
  isDocumentMime,
  isPhotoMime,
  mimeOfExtension,
  photoDimensions,
  PHOTO_MIMES,
  type DocumentMime,
  type PhotoMime,
  type UploadMime,
} from './sniff.ts';
