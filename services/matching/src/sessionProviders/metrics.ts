import client from 'prom-client';

/** Get-or-create on prom-client's global registry: tests build several providers in one process. */
function getOrCreate<T>(name: string, make: () => T): T {
  return (client.register.getSingleMetric(name) as T | undefined) ?? make();
}

export const sessionMetrics = {
  failures: getOrCreate(
    'oan_session_generation_failures_total',
    () =>
      new client.Counter({
        name: 'oan_session_generation_failures_total',
        help: 'Session turns or cards left ungenerated after every attempt (the thread stays where it is)',
        labelNames: ['provider', 'step'],
      }),
  ),
  tokens: getOrCreate(
    'oan_session_tokens_total',
    () =>
      new client.Counter({
        name: 'oan_session_tokens_total',
        help: 'Tokens billed by the chat-completions endpoint for Gofer-to-Gofer sessions',
        labelNames: ['kind'],
      }),
  ),
};
