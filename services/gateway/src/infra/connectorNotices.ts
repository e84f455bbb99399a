import type { FastifyBaseLogger } from 'fastify';
import { internalCallHeaders } from '@oan/auth';
import type { Replicas } from '@oan/http';
import type { OutdatedConnector } from '@oan/protocol';

export type NotifyOutdated = (accountId: string, outdated: OutdatedConnector) => void;

/**
 * Asks the auth service to append the `connector_outdated` notice. Fire and forget: the
 * notice is advisory, so a slow or failing auth service must never delay or fail a handshake. Auth
 * dedups on (account, connector, latest) — one notice per published release — so a reconnect posting again changes nothing.
 */
export function connectorNoticeClient(
  auth: Replicas,
  jwtSecret: string,
  log: FastifyBaseLogger,
  timeoutMs = 5000,
): NotifyOutdated {
  // Auth refuses the call without the fleet's internal secret.
  const headers = { 'content-type': 'application/json', ...internalCallHeaders(jwtSecret) };
  return (accountId, outdated) => {
    void auth
      .fetch('/internal/connector-notices', {
        method: 'POST',
        headers,
        body: JSON.stringify({ accountId, ...outdated }),
        signal: AbortSignal.timeout(timeoutMs),
      })
      .then(async (res) => {
        await res.body?.cancel();
        if (!res.ok)
          log.warn({ status: res.status, connector: outdated.connector }, 'connector notice refused');
      })
      .catch((err: unknown) => log.warn({ err }, 'connector notice failed'));
  };
}
