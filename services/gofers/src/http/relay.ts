import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { GoferContext } from '../commands/context.ts';
import { publishOnRelay, unpublishFromRelay } from '../commands/relay.ts';
import type { RelayControl } from '../relay/host.ts';
import type { KeySealer } from '../relay/keys.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

export interface RelayRouteDeps {
  ctx: GoferContext;
  authenticator: Authenticator;
  relay: RelayControl;
  sealer: KeySealer;
}

/**
 * An extension (ADR 0023) under `/api/v1`: the owner publishes a Gofer on the fleet's
 * ConnectOnion agent relay, or takes it off. Registered only when the relay is configured
 * (GOFER_RELAY_URLS). Unknown, deleted and foreign Gofers get the one 403 of the Gofer routes
 * (a probe cannot tell them apart).
 * Both answer once the relay's directory agrees (bounded wait): a lookup right after a PUT finds
 * the Gofer, right after a DELETE does not.
 */
export const relayRoutes: FastifyPluginAsyncZod<RelayRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, relay, sealer } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'role:update' });

  app.put(
    '/gofers/:goferId/relay',
    {
      onRequest: auth,
      schema: { params: s.goferParams, body: s.relayPublishBody, response: { 200: s.relayPublished } },
    },
    async (req) => {
      const { goferId } = req.params;
      const { address } = await publishOnRelay(ctx, sealer, {
        accountId: principalOf(req).accountId,
        goferId,
      });
      await relay.sync(goferId);
      return { goferId, published: true as const, address };
    },
  );

  app.delete(
    '/gofers/:goferId/relay',
    { onRequest: auth, schema: { params: s.goferParams, response: { 200: s.relayUnpublished } } },
    async (req) => {
      const { goferId } = req.params;
      await unpublishFromRelay(ctx, { accountId: principalOf(req).accountId, goferId });
      await relay.sync(goferId);
      return { goferId, published: false as const };
    },
  );
};
