import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';

/** The document whitelist (Gofer attachments). */
export const DOCUMENT_MIMES = [
  'application/pdf',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/plain',
  'text/csv',
] as const;
/** The photo whitelist (Gofer photos). */
export const PHOTO_MIMES = ['image/jpeg', 'image/png', 'image/webp'] as const;

export type DocumentMime = (typeof DOCUMENT_MIMES)[number];
export type PhotoMime = (typeof PHOTO_MIMES)[number];
export type UploadMime = DocumentMime | PhotoMime;

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The extensions the engine maps to a MIME type. */
const BY_EXTENSION: Record<string, UploadMime> = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: DOCX,
  txt: 'text/plain',
  csv: 'text/csv',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

export const mimeOfExtension = (fileName: string): UploadMime | undefined => {
  const dot = fileName.lastIndexOf('.');
  return dot === -1 ? undefined : BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()];
};

/**
 * The part's declared type decides; only a part without a Content-Type (`partType` undefined
 * or empty) or one declared `application/octet-stream` takes its type from the file name's
 * extension (the engine's map above). A declared `text/plain` is a declared type like any other, so an `x.pdf`
 * declared text/plain is text. With no known extension an absent type is RFC 7578 §4.4's default,
 * `text/plain`. Whatever is chosen, the bytes must then agree (`contentMatches`).
 */
export function declaredMime(partType: string | undefined, fileName: string): string {
  const declared = (partType ?? '').split(';')[0]!.trim().toLowerCase();
  if (declared === '') return mimeOfExtension(fileName) ?? 'text/plain';
  if (declared === 'application/octet-stream') return mimeOfExtension(fileName) ?? declared;
  return declared;
}

export const isDocumentMime = (m: string): m is DocumentMime =>
  (DOCUMENT_MIMES as readonly string[]).includes(m);
export const isPhotoMime = (m: string): m is PhotoMime => (PHOTO_MIMES as readonly string[]).includes(m);

/** What `file-type` must find in the bytes for each binary type of the whitelists. */
const SNIFFED: Record<Exclude<UploadMime, 'text/plain' | 'text/csv'>, string> = {
  'application/pdf': 'application/pdf',
  // A .doc is an OLE compound file; `file-type` names only the container (see contentMatches).
  'application/msword': 'application/x-cfb',
  // `file-type` reads the zip's entries: a docx is recognized as such, any other zip is application/zip.
  [DOCX]: DOCX,
  'image/jpeg': 'image/jpeg',
  'image/png': 'image/png',
  'image/webp': 'image/webp',
};

// The directory entry every Word 97–2003 file has, as its UTF-16LE name.
const WORD_STREAM = Buffer.from('WordDocument', 'utf16le');
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether the bytes are what `mime` says (check the bytes, not only the declared type). Binary
 * types need `file-type`'s exact verdict, so an ELF, PE or plain zip declared as pdf, png or docx is
 * refused; a compound file counts as msword only with a `WordDocument` stream (an .msi or .xls does
 * not). Text types must be valid UTF-8 without NUL bytes (which every executable format contains).
 */
export async function contentMatches(mime: UploadMime, bytes: Buffer): Promise<boolean> {
  if (bytes.length === 0) return false;
  if (mime === 'text/plain' || mime === 'text/csv') {
    if (bytes.includes(0)) return false;
    try {
      utf8.decode(bytes);
      return true;
    } catch {
      return false;
    }
  }
  const found = await fileTypeFromBuffer(bytes);
  if (found?.mime !== SNIFFED[mime]) return false;
  return mime !== 'application/msword' || bytes.includes(WORD_STREAM);
}

/** Width and height of an accepted photo; null when the header does not say (never an error). */
export function photoDimensions(bytes: Buffer): { width: number | null; height: number | null } {
  try {
    const { width, height, orientation } = imageSize(bytes);
    // EXIF orientations 5–8 rotate by 90°: report the size as the photo is displayed.
    const turned = orientation !== undefined && orientation >= 5;
    return { width: (turned ? height : width) ?? null, height: (turned ? width : height) ?? null };
  } catch {
    return { width: null, height: null };
  }
}
