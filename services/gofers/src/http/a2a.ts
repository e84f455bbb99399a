import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { agentCardUrl } from '../a2a/card.ts';
import { publishOnA2A, unpublishFromA2A } from '../commands/a2a.ts';
import type { GoferContext } from '../commands/context.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

export interface A2AOwnerRouteDeps {
  ctx: GoferContext;
  authenticator: Authenticator;
  /** The fleet's public origin (the agent card's URL). */
  origin: string;
}

/**
 * An extension (ADR 0035) under `/api/v1`: the owner makes a Gofer reachable as an A2A agent, or
 * takes it off. Both idempotent; unknown, deleted and foreign Gofers get the one 403 of the Gofer
 * routes. Both take effect when they answer: the card is served (or 404) from the same commit.
 */
export const a2aOwnerRoutes: FastifyPluginAsyncZod<A2AOwnerRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, origin } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'role:update' });

  app.put(
    '/gofers/:goferId/a2a',
    {
      onRequest: auth,
      schema: { params: s.goferParams, body: s.relayPublishBody, response: { 200: s.a2aPublished } },
    },
    async (req) => {
      const { goferId } = req.params;
      await publishOnA2A(ctx, { accountId: principalOf(req).accountId, goferId });
      return { goferId, published: true as const, agentCardUrl: agentCardUrl(origin, goferId) };
    },
  );

  app.delete(
    '/gofers/:goferId/a2a',
    { onRequest: auth, schema: { params: s.goferParams, response: { 200: s.a2aUnpublished } } },
    async (req) => {
      const { goferId } = req.params;
      await unpublishFromA2A(ctx, { accountId: principalOf(req).accountId, goferId });
      return { goferId, published: false as const };
    },
  );
};
