/** Protocol v1 constants (spec/OAN-REFERENCE.md §1). */
export const OAN_PROTOCOL_VERSION = 1;
export const OAN_WS_NAMESPACE = '/oan';
export const OAN_WS_EVENT = 'oan:event';
export const OAN_BASE_PATH = '/api/v1';
export const OAN_EVENTS_MAX_PAGE_LIMIT = 200;
export const OAN_EVENTS_DEFAULT_PAGE_LIMIT = 50;

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

/** §10.12: latest published release per connector package. */
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

/** Normalizes a registration platform (§2.6): anything unknown becomes `other`. */
export function normalizePlatform(value: unknown): OanConnectorPlatform {
  return (OAN_CONNECTOR_PLATFORMS as readonly unknown[]).includes(value)
    ? (value as OanConnectorPlatform)
    : 'other';
}
