/**
 * Bounding a connector's handshake declaration and deciding whether it is outdated.
 * Pure, so the gateway can use the same rules; lives in the protocol lib so the gateway (which decides) and auth (which records the connector_outdated notice once) share it.
 */
export interface ClientInfo {
  name: string;
  version: string;
}

export interface OutdatedConnector {
  connector: string;
  installed: string;
  latest: string;
}

const NAME = /^[@A-Za-z0-9._/-]+$/;
const VERSION = /^[A-Za-z0-9.+-]+$/;

/** The declaration when it passes every bound on the handshake declaration, otherwise `null` (treated as undeclared). */
export function parseClientInfo(value: unknown): ClientInfo | null {
  if (typeof value !== 'object' || value === null) return null;
  const { name, version } = value as { name?: unknown; version?: unknown };
  if (typeof name !== 'string' || typeof version !== 'string') return null;
  if (name.length === 0 || name.length > 128 || !NAME.test(name)) return null;
  if (version.length === 0 || version.length > 64 || !VERSION.test(version)) return null;
  return { name, version };
}

const SEMVER_CORE = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/;

function parseVersion(v: string): [bigint, bigint, bigint] | null {
  const m = SEMVER_CORE.exec(v.trim());
  return m ? [BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!)] : null;
}

/**
 * -1, 0 or 1 comparing `major.minor.patch` numerically; a `-…`/`+…` suffix is ignored (so
 * `0.1.2-beta.1` equals `0.1.2`); `null` when either side does not parse ("unknown").
 */
export function compareConnectorVersions(a: string, b: string): -1 | 0 | 1 | null {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return null;
  for (let i = 0; i < 3; i++) {
    if (pa[i]! < pb[i]!) return -1;
    if (pa[i]! > pb[i]!) return 1;
  }
  return 0;
}

/**
 * Notify only when a valid declaration names a registered connector, both versions parse and the
 * installed one is older. Equal, ahead, unknown name or unparsable ⇒ `null` (say nothing).
 */
export function findOutdatedConnector(
  clientDecl: unknown,
  releases: Readonly<Record<string, string>>,
): OutdatedConnector | null {
  const info = parseClientInfo(clientDecl);
  if (!info || !Object.hasOwn(releases, info.name)) return null;
  const latest = releases[info.name]!;
  return compareConnectorVersions(info.version, latest) === -1
    ? { connector: info.name, installed: info.version, latest }
    : null;
}
