import client from 'prom-client';

/**
 * Gateway metrics on prom-client's global registry, which fastify-metrics serves at /metrics.
 * Get-or-create: several gateway apps may live in one process (tests), and the registry refuses a
 * second metric with the same name.
 */
function getOrCreate<T>(name: string, make: () => T): T {
  return (client.register.getSingleMetric(name) as T | undefined) ?? make();
}

export interface GatewayMetrics {
  sockets: client.Gauge;
  emitted: client.Counter;
  gapFills: client.Counter;
  /** Sockets cut because their send backlog passed a limit (socket/backlog.ts), by limit. */
  slowDisconnects: client.Counter<'limit'>;
  /** `GET /events?wait=N` requests held right now (long-polls). */
  longPolls: client.Gauge;
}

export function gatewayMetrics(): GatewayMetrics {
  return {
    sockets: getOrCreate(
      'oan_gateway_sockets_connected',
      () => new client.Gauge({ name: 'oan_gateway_sockets_connected', help: 'Connected /oan sockets' }),
    ),
    emitted: getOrCreate(
      'oan_gateway_envelopes_emitted_total',
      () =>
        new client.Counter({
          name: 'oan_gateway_envelopes_emitted_total',
          help: 'oan:event emits to sockets',
        }),
    ),
    gapFills: getOrCreate(
      'oan_gateway_gap_fills_total',
      () =>
        new client.Counter({
          name: 'oan_gateway_gap_fills_total',
          help: 'Gaps closed from read.oan_event (missed or out-of-order live publishes)',
        }),
    ),
    slowDisconnects: getOrCreate(
      'oan_gateway_slow_socket_disconnects_total',
      () =>
        new client.Counter({
          name: 'oan_gateway_slow_socket_disconnects_total',
          help: 'Sockets disconnected for falling too far behind (send backlog past a limit)',
          labelNames: ['limit'] as const,
        }),
    ),
    longPolls: getOrCreate(
      'oan_gateway_long_polls_held',
      () =>
        new client.Gauge({
          name: 'oan_gateway_long_polls_held',
          help: 'GET /events?wait=N requests held, waiting for an envelope',
        }),
    ),
  };
}
