import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { RuntimesContext } from '../commands/context.ts';
import { waitingForOwner } from '../commands/takeover.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';
import { waitingView } from './views.ts';

/** `GET /runtimes/waiting` (docs/runtimes.md, ADR 0032): what the runtimes handed to the owner. */
export const waitingRoutes: FastifyPluginAsyncZod<{
  ctx: RuntimesContext;
  authenticator: Authenticator;
}> = async (app, { ctx, authenticator }) => {
  app.setErrorHandler(rethrowMapped);
  const auth = requireAuth(authenticator, { mode: 'multi+realm' });
  app.get(
    '/runtimes/waiting',
    {
      onRequest: auth,
      schema: {
        summary: 'The jobs of every runtime of the account handed to the owner ("Waiting for you")',
        tags: ['extension'],
        description:
          'Jobs in state `owner` (attempts used up, or no live worker for the grace), oldest decision first, each ' +
          'with its runtime and its envelope (where the owner answers it). Answering one by hand (the Gofer chat, the ' +
          'thread, the match request, the conversation) closes it as `superseded`; it then leaves this list.',
        response: { 200: s.waitingList },
      },
    },
    async (req) => (await waitingForOwner(ctx, principalOf(req).accountId)).map(waitingView),
  );
};
