/** A stored file is a photo or a document, in every context that keeps files. */
export type AttachmentKind = 'photo' | 'document';
