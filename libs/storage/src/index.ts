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
} from './types';
export {
  FilesystemStorage,
  type FilesystemStorageOptions,
  type OpenedObject,
  type SignatureCheck,
} from './filesystem';
export { startFileListener, type FileListener, type FileListenerOptions } from './listener';
export { S3Storage, type S3StorageOptions } from './s3';
export {
  createStorage,
  deriveSigningSecret,
  refineStorageEnv,
  storageEnv,
  type CreateStorageOptions,
  type StorageEnv,
  type StorageSetup,
} from './config';
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
} from './sniff';
