const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The largest request body each process accepts (its Fastify `bodyLimit`). The services pass theirs
 * to createHttpApp and the edge refuses a larger body itself before proxying (services/edge
 * routes.ts), so the two can never disagree.
 */
export const BODY_LIMITS = {
  /** Emails, codes, key names. */
  auth: 16 * KiB,
  /** A chat message (≤ 20 000 characters) or a few short strings. */
  gofers: 256 * KiB,
  /** Decisions and short strings. */
  matching: 16 * KiB,
  /** A conversation message (≤ 20 000 characters) with up to 10 attachment ids. */
  conversations: 256 * KiB,
  /** Runtimes, claims, heartbeats and finishes: short JSON. */
  runtimes: 16 * KiB,
  /** A2A JSON-RPC requests to published Gofers (ADR 0035): one text message. */
  a2a: 64 * KiB,
  /** GET-only surface: the framework default. */
  gateway: MiB,
} as const;

/** 10 × 1024 × 1024 bytes per file on every upload endpoint, enforced while the part streams in. */
export const MAX_UPLOAD_BYTES = 10 * MiB;

/** A multipart upload: one file of MAX_UPLOAD_BYTES plus the multipart framing and small fields. */
export const UPLOAD_BODY_LIMIT = MAX_UPLOAD_BYTES + 64 * KiB;
