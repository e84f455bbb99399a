import type { FastifyRequest } from 'fastify';
import { sql, type MikroORM } from '@oan/db';
import { createHttpApp, unauthorized, type Logger } from '@oan/http';
import { createAuthenticator, type Authenticator } from './authenticator.ts';
import { COMMAND_ID_HEADER, INTERNAL_CALL_HEADER, isInternalCall } from './internalCall.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** An internal call's command id (`x-oan-command-id` beside the internal secret); else absent. */
    commandId?: string;
  }
}

const COMMAND_ID = /^[A-Za-z0-9:._/-]{1,200}$/;

/** The command id of the request, when an internal call sent one (see `createServiceApp`). */
export const commandIdOf = (req: FastifyRequest): string | undefined => req.commandId;

export interface ServiceAppOptions {
  /** The service's name (logs, metrics) and its OpenAPI title `OAN <name>`. */
  name: string;
  config: { LOG_LEVEL: string; JWT_SECRET: string };
  /** Owned by the caller (closed after the app). */
  orm: MikroORM;
  redis: { ping(): Promise<unknown> };
  bodyLimit: number;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
  /** Replaces the factory's logger (tests). */
  logger?: Logger;
}

/**
 * The part every OAN command service's composition root shares: the HTTP app (error body, request
 * ids, OpenAPI, metrics) with Postgres and Redis readiness, and the credential authenticator,
 * drained when the app closes. The service then registers its routes behind ENABLE_OPEN_API.
 */
export async function createServiceApp(
  opts: ServiceAppOptions,
): Promise<{ app: Awaited<ReturnType<typeof createHttpApp>>; authenticator: Authenticator }> {
  const { orm, redis } = opts;
  const app = await createHttpApp({
    name: opts.name,
    logLevel: opts.config.LOG_LEVEL,
    openapi: { title: `OAN ${opts.name}` },
    bodyLimit: opts.bodyLimit,
    metrics: opts.metrics,
    readiness: {
      postgres: () => sql(orm.em.fork(), 'select 1'),
      redis: () => redis.ping(),
    },
    ...(opts.logger ? { fastify: { loggerInstance: opts.logger } } : {}),
  });
  const authenticator = createAuthenticator({
    orm,
    jwtSecret: opts.config.JWT_SECRET,
    onBackgroundError: (err) => app.log.warn({ err }, 'could not record API key last use'),
  });
  app.addHook('onClose', () => authenticator.drain());
  // A command id makes a command exactly-once for a fleet process that may send it again (runtimes);
  // anyone else sending one is refused rather than ignored, and the edge never passes it on.
  app.addHook('onRequest', async (req) => {
    const header = req.headers[COMMAND_ID_HEADER];
    if (header === undefined) return;
    if (!isInternalCall(opts.config.JWT_SECRET, req.headers[INTERNAL_CALL_HEADER]))
      throw unauthorized('Unauthorized: a command id is for internal calls');
    if (typeof header !== 'string' || !COMMAND_ID.test(header))
      throw unauthorized('Unauthorized: malformed command id');
    req.commandId = header;
  });
  return { app, authenticator };
}
