import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { RuntimesContext } from '../commands/context.ts';
import type { Endpoints } from '../dispatch/endpoints.ts';
import { failuresOf } from '../dispatch/store.ts';
import { verifyRuntime } from '../dispatch/verify.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';
import { runtimeView } from './views.ts';

export interface EndpointRouteDeps {
  ctx: RuntimesContext;
  authenticator: Authenticator;
  endpoints: Endpoints;
}

/** `/runtimes/{id}/verify` (docs/runtimes.md, ADR 0033): the challenge that binds an endpoint. */
export const endpointRoutes: FastifyPluginAsyncZod<EndpointRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, endpoints } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });

  app.post(
    '/runtimes/:runtimeId/verify',
    {
      onRequest: auth,
      schema: {
        summary: "Send a runtime's endpoint the signed challenge again",
        tags: ['extension'],
        description:
          'The endpoint must answer 2xx with `{"challenge": …}` echoing the one sent. Then the runtime is `active`, its ' +
          'failures reset (this re-enables a `disabled` one) and its jobs are pushed; otherwise `422 VERIFICATION_FAILED` ' +
          'and it is `unverified`. A runtime without an endpoint is `409 RUNTIME_WITHOUT_ENDPOINT`.',
        params: s.runtimeParams,
        response: { 200: s.runtime },
      },
    },
    async (req) => {
      const row = await verifyRuntime(endpoints, ctx, principalOf(req).accountId, req.params.runtimeId);
      return runtimeView(row, await failuresOf(ctx.orm.em.fork(), [row.id]));
    },
  );
};
