/** Seed 001's rate limits (Security considerations), plus the relay's own for socket churn. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

export const LIMITS = {
  /** A re-announce on the same socket: 1 per 10 s per agent (seed 001). */
  announce: { max: 1, windowMs: 10_000 },
  /** A first ANNOUNCE on a new socket (reconnects after a restart): 10 per minute per agent. */
  announceSocket: { max: 10, windowMs: 60_000 },
  find: { max: 10, windowMs: 60_000 },
  getAgent: { max: 100, windowMs: 60_000 },
} satisfies Record<string, RateLimit>;

/**
 * What one client address (the hop the edge wrote) may do at the relay per minute, whatever agent
 * addresses it uses: those are free keys, so the per-address limits above bound nothing alone.
 */
export interface PerClientLimits {
  /** New sockets on any relay path. */
  sockets: number;
  /** ANNOUNCEs that are recorded (an `AgentAnnounced` appended): a first one, or a changed one. */
  announces: number;
  /** Frames a client sends on its /ws/input sockets. */
  clientFrames: number;
}

/** Frames up to 1 MiB (the peers' `websockets` default), never more. */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** A socket with more than this waiting to be written to it is closed (a peer that does not read). */
export const MAX_BUFFERED_BYTES = 8 * MAX_FRAME_BYTES;
/** A socket that has not sent its first valid frame after this long is closed (half-open floods). */
export const FIRST_FRAME_MS = 10_000;
/** Sockets a replica holds before their first frame; more are refused at the upgrade. */
export const MAX_PENDING_SOCKETS = 1000;

/** A session id a client may present: what the relay itself mints (a UUID) or similar. */
export const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The relay's ERROR frame: clients read `message`, agents `error`. */
export const errorFrame = (message: string, originalType?: string): string =>
  JSON.stringify({
    type: 'ERROR',
    error: message,
    message,
    ...(originalType ? { original_type: originalType } : {}),
    timestamp: Math.floor(Date.now() / 1000),
  });

export const NOT_FOUND = 'Agent not found or offline';
