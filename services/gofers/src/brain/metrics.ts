import client from 'prom-client';

/**
 * The brain's metrics on prom-client's global registry (served at /metrics by the service's app).
 * Get-or-create: tests start several brains in one process and the registry refuses duplicates.
 */
function getOrCreate<T>(name: string, make: () => T): T {
  return (client.register.getSingleMetric(name) as T | undefined) ?? make();
}

export const brainMetrics = {
  failures: getOrCreate(
    'oan_brain_generation_failures_total',
    () =>
      new client.Counter({
        name: 'oan_brain_generation_failures_total',
        help: 'User messages left without a reply after every attempt (the protocol lets a failed reply go silent)',
        labelNames: ['provider'],
      }),
  ),
  latency: getOrCreate(
    'oan_brain_generation_seconds',
    () =>
      new client.Histogram({
        name: 'oan_brain_generation_seconds',
        help: 'Time to a usable reply, retries included (or to giving up)',
        labelNames: ['provider', 'outcome'],
        buckets: [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 30, 60, 120],
      }),
  ),
  // Cost counters (the openai brain reports its token use).
  tokens: getOrCreate(
    'oan_brain_tokens_total',
    () =>
      new client.Counter({
        name: 'oan_brain_tokens_total',
        help: 'Tokens billed by the chat-completions endpoint',
        labelNames: ['kind'],
      }),
  ),
};
