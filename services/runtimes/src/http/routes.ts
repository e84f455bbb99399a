import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { noContent, validation } from '@oan/http';
import { normalizePolicy } from '../domain/policy.ts';
import type { RuntimesContext } from '../commands/context.ts';
import { configureRuntime, registerRuntime, removeRuntime, runtimeNotFound } from '../commands/runtimes.ts';
import type { Endpoints } from '../dispatch/endpoints.ts';
import { failuresOf } from '../dispatch/store.ts';
import { newEndpoint, refuseEndpoint, verifyEndpoint } from '../dispatch/verify.ts';
import { listRuntimes, ownRuntime, type RuntimeRow } from '../infra/runtimeStore.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';
import { runtimeView } from './views.ts';

export interface RuntimeRouteDeps {
  ctx: RuntimesContext;
  authenticator: Authenticator;
  /** Verifies the endpoints of runtimes created with one. */
  endpoints: Endpoints;
}

const TAGS = ['extension'];

/**
 * `/runtimes` and `/runtimes/{id}` (docs/runtimes.md, ADR 0030): register, list, read, configure and
 * delete; a runtime's jobs are `jobRoutes`'. Under `/api/v1` with ENABLE_OPEN_API; API key or OAN JWT.
 */
export const runtimeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });
  const withFailures = async (row: RuntimeRow) =>
    runtimeView(row, row.endpoint === null ? [] : await failuresOf(ctx.orm.em.fork(), [row.id]));

  app.post(
    '/runtimes',
    {
      onRequest: auth,
      schema: {
        summary:
          'Register a runtime: a named consumer of the account decisions (an extension to protocol v1)',
        tags: TAGS,
        description:
          'Every envelope of the account after the registration that carries a `reply` and matches `policy` becomes ' +
          'one job, handed to exactly one worker by `claim` (docs/runtimes.md). The same name and settings again answer ' +
          'the same runtime (200); other settings are `409 RUNTIME_EXISTS`; a ninth is `429 RUNTIME_LIMIT_REACHED`. ' +
          'With `endpoint` (https, a public address) the jobs are pushed there instead of claimed: the answer carries ' +
          'the signing `secret` once, and the endpoint is sent a challenge at once; `state` is `active` if it echoed ' +
          'it, `unverified` otherwise (then `POST /runtimes/{id}/verify`).',
        body: s.runtimeBody,
        response: { 200: s.runtimeCreated, 201: s.runtimeCreated },
      },
    },
    async (req, reply) => {
      const url = req.body.endpoint;
      const refused = url === undefined ? null : refuseEndpoint(deps.endpoints, url);
      if (refused) throw validation(`endpoint: ${refused}`);
      const endpoint = url === undefined ? undefined : newEndpoint(url);
      const { created, row } = await registerRuntime(
        ctx,
        principalOf(req).accountId,
        req.body.name,
        normalizePolicy(req.body.policy),
        endpoint,
      );
      if (!created || !endpoint) return reply.status(created ? 201 : 200).send(await withFailures(row));
      const checked = await verifyEndpoint(deps.endpoints, ctx, row);
      return reply.status(201).send({ ...(await withFailures(checked.row)), secret: endpoint.secret });
    },
  );

  app.get(
    '/runtimes',
    {
      onRequest: auth,
      schema: { summary: "The account's runtimes", tags: TAGS, response: { 200: s.runtimeList } },
    },
    async (req) => {
      const em = ctx.orm.em.fork();
      const rows = await listRuntimes(em, principalOf(req).accountId);
      const failures = await failuresOf(
        em,
        rows.filter((r) => r.endpoint !== null).map((r) => r.id),
      );
      return rows.map((r) => runtimeView(r, failures));
    },
  );

  app.get(
    '/runtimes/:runtimeId',
    {
      onRequest: auth,
      schema: {
        summary: 'One runtime',
        tags: TAGS,
        description: 'An unknown or another account’s id is the byte-identical 404.',
        params: s.runtimeParams,
        response: { 200: s.runtime },
      },
    },
    async (req) => {
      const row = await ownRuntime(ctx.orm.em.fork(), principalOf(req).accountId, req.params.runtimeId);
      if (!row) throw runtimeNotFound();
      return withFailures(row);
    },
  );

  app.delete(
    '/runtimes/:runtimeId',
    {
      onRequest: auth,
      schema: {
        summary: 'Delete a runtime and its jobs',
        tags: TAGS,
        params: s.runtimeParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      await removeRuntime(ctx, principalOf(req).accountId, req.params.runtimeId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/runtimes/:runtimeId/configure',
    {
      onRequest: auth,
      schema: {
        summary: "Replace a runtime's policy (compare-and-set on its version)",
        tags: TAGS,
        description:
          'A `version` other than the current one is `409 VERSION_CONFLICT`. Queued jobs the new policy does not want ' +
          'are dropped; leased ones finish under their lease.',
        params: s.runtimeParams,
        body: s.configureBody,
        response: { 200: s.runtime },
      },
    },
    async (req) => {
      const { accountId } = principalOf(req);
      const row = await configureRuntime(
        ctx,
        accountId,
        req.params.runtimeId,
        req.body.version,
        normalizePolicy(req.body.policy),
      );
      ctx.waiters.wake(accountId);
      return runtimeView(row);
    },
  );
};
