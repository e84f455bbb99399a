import { ANNOUNCE_STYLE, canonicalJson } from '@oan/protocol';

/** An agent address: `0x` + the raw 32-byte Ed25519 public key in lowercase hex. */
export const ADDRESS = /^0x[0-9a-f]{64}$/;
/** Seed 001 and the live relay: a summary of at most 1000 characters. */
export const MAX_SUMMARY = 1000;
export const MAX_ENDPOINTS = 16;
export const MAX_ENDPOINT_LENGTH = 512;
/**
 * A profile's serialized size (UTF-8 bytes of its JSON). Every recorded announcement is kept in the
 * log for good, so what one may carry is small: a name, a few fields, not a document.
 */
export const MAX_PROFILE_BYTES = 4096;
/** An ANNOUNCE more than this far from the relay's clock is refused (replay window, seconds). */
export const ANNOUNCE_SKEW_S = 300;

/** A well-formed ANNOUNCE: what the relay keeps, and the exact bytes its signature covers. */
export interface Announce {
  address: string;
  timestamp: number;
  summary: string;
  endpoints: string[];
  relay: string | null;
  profile: Record<string, unknown> | null;
  /** 64 bytes as hex, without `0x` (an optional `0x` prefix is stripped, as the host verifier does). */
  signature: string;
  /** The ANNOUNCE's canonical form without `signature`: the exact bytes the signature covers. */
  signed: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const fail = (error: string): Parsed<never> => ({ ok: false, error });

/** Checks an ANNOUNCE frame's shape (not its signature, which needs the crypto adapter). */
export function parseAnnounce(msg: Record<string, unknown>, nowS: number): Parsed<Announce> {
  const { address, timestamp, summary, endpoints, signature } = msg;
  if (typeof address !== 'string' || !ADDRESS.test(address)) return fail('Invalid address');
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) return fail('Invalid timestamp');
  if (Math.abs(nowS - timestamp) > ANNOUNCE_SKEW_S) return fail('Timestamp outside the accepted window');
  if (typeof summary !== 'string') return fail('Invalid summary');
  if (summary.length > MAX_SUMMARY) return fail(`Summary too long (max ${MAX_SUMMARY} chars)`);
  const eps = endpoints ?? [];
  if (
    !Array.isArray(eps) ||
    eps.length > MAX_ENDPOINTS ||
    !eps.every((e) => typeof e === 'string' && e.length <= MAX_ENDPOINT_LENGTH)
  ) {
    return fail('Invalid endpoints');
  }
  if (msg.relay !== undefined && msg.relay !== null && typeof msg.relay !== 'string')
    return fail('Invalid relay');
  const profile = msg.profile;
  if (profile !== undefined && profile !== null && (typeof profile !== 'object' || Array.isArray(profile))) {
    return fail('Invalid profile');
  }
  if (profile && new TextEncoder().encode(JSON.stringify(profile)).length > MAX_PROFILE_BYTES)
    return fail(`Profile too large (max ${MAX_PROFILE_BYTES} bytes as JSON)`);
  if (typeof signature !== 'string') return fail('Missing signature');
  const sig = signature.replace(/^0x/, '').toLowerCase();
  if (!/^[0-9a-f]{128}$/.test(sig)) return fail('Invalid signature');
  const unsigned = Object.fromEntries(Object.entries(msg).filter(([k]) => k !== 'signature'));
  return {
    ok: true,
    value: {
      address,
      timestamp,
      summary,
      endpoints: eps as string[],
      relay: typeof msg.relay === 'string' ? msg.relay : null,
      profile: (profile as Record<string, unknown> | undefined) ?? null,
      signature: sig,
      signed: canonicalJson(unsigned, ANNOUNCE_STYLE),
    },
  };
}

/** What an announcement says about the agent, to tell a heartbeat from a change worth an event. */
export const announceContent = (a: Announce): string =>
  JSON.stringify([a.summary, a.endpoints, a.relay, a.profile]);
