import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may be sent (docs/security.md): https to a public address. The checks run
 * on the URL at registration and on every resolved address at send time (a name can be pointed at an
 * internal address after it was registered); `allowLoopback` is the QA switch of `npm run dev` and
 * the tests (http, and loopback addresses), refused in production by the config.
 */
export interface UrlPolicy {
  allowLoopback: boolean;
}

export type AddressClass = 'metadata' | 'loopback' | 'unspecified' | 'private' | 'link-local' | 'reserved';

const classes: [AddressClass, [string, number, 'ipv4' | 'ipv6'][], string[]][] = [
  // Cloud instance metadata services (AWS/GCP/Azure, ECS, Alibaba, AWS over IPv6).
  ['metadata', [], ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']],
  [
    'loopback',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
    [],
  ],
  [
    'unspecified',
    [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
    [],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (RFC 6598)
      ['fc00::', 7, 'ipv6'], // unique local
      ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed inside some networks)
    ],
    [],
  ],
  [
    'link-local',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
    [],
  ],
  [
    'reserved',
    [
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['224.0.0.0', 4, 'ipv4'], // multicast
      ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
      ['ff00::', 8, 'ipv6'], // multicast
      // Forms that carry an IPv4 address inside, so reach any of them, private ones included:
      ['64:ff9b::', 96, 'ipv6'], // NAT64, well-known prefix
      ['64:ff9b:1::', 48, 'ipv6'], // NAT64, local-use prefix
      ['::', 96, 'ipv6'], // IPv4-compatible (`::a.b.c.d`, deprecated)
      ['2002::', 16, 'ipv6'], // 6to4
      ['2001::', 32, 'ipv6'], // Teredo
      ['100::', 64, 'ipv6'], // discard
      ['2001:db8::', 32, 'ipv6'], // documentation
    ],
    [],
  ],
];

const lists = classes.map(([name, subnets, addresses]) => {
  const list = new BlockList();
  for (const [net, prefix, type] of subnets) list.addSubnet(net, prefix, type);
  for (const a of addresses) list.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  return [name, list] as const;
});

/** The class of a non-public address, or null for a public one. */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  // IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is the IPv4 address itself.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1];
  const ip = mapped ?? bare;
  const family = isIP(ip);
  if (family === 0) return 'reserved'; // not an address at all: never connect to it
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [name, list] of lists) if (list.check(ip, type)) return name;
  return null;
}

/**
 * Why a resolved address may not be sent to, or null when it may. The reason names the class only:
 * it becomes the delivery error the account reads, which must not tell it what our resolver
 * answered for its name (an internal address).
 */
export function refuseAddress(address: string, policy: UrlPolicy): string | null {
  const cls = classifyAddress(address);
  if (cls === null || (cls === 'loopback' && policy.allowLoopback)) return null;
  return `address not allowed (${cls})`;
}

/** Why a URL may not be registered, or null: the scheme, and a host that is a refused address. */
export function refuseUrl(raw: string, policy: UrlPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  const schemes = policy.allowLoopback ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    return `url must use ${policy.allowLoopback ? 'http or https' : 'https'}`;
  if (url.username || url.password) return 'url must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return refuseAddress(host, policy) && 'url must name a public address';
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!policy.allowLoopback && (name === 'localhost' || name.endsWith('.localhost'))) {
    return 'url must name a public address';
  }
  if (name === 'metadata.google.internal') return 'url must name a public address';
  return null;
}
