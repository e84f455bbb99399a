/** Protocol v1 constants. */
export const OAN_PROTOCOL_VERSION = 1;
export const OAN_WS_NAMESPACE = '/oan';
export const OAN_WS_EVENT = 'oan:event';
export const OAN_BASE_PATH = '/api/v1';
export const OAN_EVENTS_MAX_PAGE_LIMIT = 200;
export const OAN_EVENTS_DEFAULT_PAGE_LIMIT = 50;

/**
 * Extensions for connectors without a socket (docs/connectors-without-socket.md); a v1
 * connector that uses none of them sees no change.
 * Long-poll: `GET /events?wait=N` holds an empty answer up to N seconds.
 */
export const OAN_EVENTS_MAX_WAIT_SECONDS = 30;
/** `Idempotency-Key` (IETF httpapi idempotency-key-header draft) on every POST. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long a completed request's answer is kept for replay. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

export const OAN_EVENT_TYPES = [
  'gofer_message',
  'gofer_question',
  'session_summary',
  'pair_proposed',
  'match_request',
  'match_decided',
  'relay_message',
  'system_notice',
] as const;
export type OanEventType = (typeof OAN_EVENT_TYPES)[number];

export const OAN_MESSAGE_SOURCES = [
  'platform',
  'own_gofer',
  'counterpart_gofer',
  'counterpart_party',
] as const;
export type OanMessageSource = (typeof OAN_MESSAGE_SOURCES)[number];

export const OAN_CONNECTOR_PLATFORMS = ['openclaw', 'hermes', 'dsh', 'other'] as const;
export type OanConnectorPlatform = (typeof OAN_CONNECTOR_PLATFORMS)[number];

/** The latest published release per connector package. */
export const OAN_CONNECTOR_RELEASES: Readonly<Record<string, string>> = {
  '@openagentnetwork/dsh-plugin': '0.1.5',
  '@openagentnetwork/openclaw-plugin': '0.2.8',
};

export const API_KEY_PREFIX = 'gofers_';
export const API_KEY_PERMISSIONS = [
  'role:create',
  'role:read',
  'role:update',
  'role:delete',
  'thread:read',
  'thread:create',
  'message:send',
  'message:read',
  'pair:query',
  'pair:confirm',
] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

export const OAN_REALM = 'oan';
export const WS_ROOM_PREFIX = 'oan:';

/** Normalizes a registration platform: anything unknown becomes `other`. */
export function normalizePlatform(value: unknown): OanConnectorPlatform {
  return (OAN_CONNECTOR_PLATFORMS as readonly unknown[]).includes(value)
    ? (value as OanConnectorPlatform)
    : 'other';
}

/**
 * Runtimes extension (docs/runtimes.md): the Socket.IO event that tells an opted-in socket
 * (handshake `auth.runtimes: true`) that a runtime of its account has jobs to claim. Not one of the
 * v1 event types and never sent to a socket that did not opt in.
 */
export const OAN_WS_RUNTIME_JOBS = 'runtime_jobs';
