import { BlockList, isIP } from 'node:net';
import { z } from '@oan/config';

/**
 * Telling clients apart behind the edge. The edge replaces `X-Forwarded-For` with the address it
 * saw, so a service believes that header only from a peer on the trusted proxy list
 * (`TRUST_PROXY`: comma-separated addresses or CIDR blocks, `loopback` for 127.0.0.0/8 and ::1);
 * from any other peer the peer itself is the client.
 */
export type TrustedProxies = (address: string) => boolean;

/** The peer address without an IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` is 10.0.0.1). */
const plain = (address: string) =>
  /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;

/** Parses a `TRUST_PROXY` list; throws on an entry that is neither `loopback`, an address nor a CIDR. */
export function trustedProxies(list: string): TrustedProxies {
  const blocks = new BlockList();
  for (const raw of list.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry === 'loopback') {
      blocks.addSubnet('127.0.0.0', 8, 'ipv4');
      blocks.addAddress('::1', 'ipv6');
      continue;
    }
    const [addr = '', bits] = entry.split('/');
    const family = isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`TRUST_PROXY: "${entry}" is not loopback, an IP address or a CIDR block`);
    }
    blocks.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return (address) => {
    const a = plain(address);
    const family = isIP(a);
    return family !== 0 && blocks.check(a, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client of a request: the peer, unless the peer is a trusted proxy; then the nearest
 * `X-Forwarded-For` hop that is not itself trusted (read from the right, as proxy-addr does), so a
 * hop the client wrote further left is never taken.
 */
export function clientOf(peer: string, forwardedFor: string | string[] | undefined, trusted: TrustedProxies) {
  let client = plain(peer);
  if (!trusted(client)) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    client = plain(hops[i]!);
    if (!trusted(client)) return client;
  }
  return client;
}

/**
 * The key a limit counts a client under: an IPv4 address as is, an IPv6 address by its /64 (one
 * subscriber usually holds a whole /64, so keying per /128 would give them 2^64 budgets).
 */
export function clientKey(address: string): string {
  const a = plain(address);
  if (isIP(a) !== 6) return a;
  const [head = '', tail = ''] = a.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (`::1.2.3.4`) lies in the low 64 bits: it never reaches the first four groups.
  const groups = a.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16).toString(16) : '0'))
    .join(':')}::/64`;
}

/** `TRUST_PROXY` in a service's config: checked at start, kept as text; default loopback only. */
export const trustProxyList = z
  .string()
  .trim()
  .min(1)
  .default('loopback')
  .superRefine((v, ctx) => {
    try {
      trustedProxies(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });
