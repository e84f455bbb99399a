import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { commandIdOf, principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { sql } from '@oan/db';
import type { ApiKeyPermission } from '@oan/protocol';
import { plausibleId, runThreadCommand, type MatchingContext } from '../commands/context.ts';
import { ForbiddenError, NotFoundError } from '../domain/errors.ts';
import { matchStatusFor, sidesOf } from '../domain/threadState.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

export interface MatchRequestRouteDeps {
  ctx: MatchingContext;
  authenticator: Authenticator;
}

/** The one probe-safe 403 for an unknown request id and a caller who is not its recipient. */
const requestForbidden = () => new ForbiddenError('MATCH_REQUEST_FORBIDDEN', 'Forbidden');

/**
 * Requesting a match and deciding one, under `/api/v1`, registered only when ENABLE_OPEN_API is on
 * (all-or-nothing); auth `multi+realm`. Decided on the thread's stream (docs/adr/0012): concurrent
 * requests of both sides are serialized by its version and end in one match.
 */
export const matchRequestRoutes: FastifyPluginAsyncZod<MatchRequestRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = (permission: ApiKeyPermission) =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  // (25) Always 201 with the caller's MatchStatusResponse after the command: a new request, the
  // caller's own open one, or the match (an existing one, or the one a cross request just made).
  app.post(
    '/match-requests',
    {
      onRequest: auth('pair:query'),
      schema: { body: s.matchRequestBody, response: { 201: s.matchStatusResponse } },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const { threadId, roleId } = req.body;
      const { state } = await runThreadCommand(
        ctx,
        threadId,
        { type: 'RequestMatch', data: { requestId: ctx.ids(), goferId: roleId, accountId } },
        [accountId],
      );
      const sides = state.status === 'none' ? null : sidesOf(state, roleId);
      // Unreachable: the decider refused unknown threads and foreign Gofers with this same 404.
      if (state.status === 'none' || !sides) throw new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');
      // `counterpart` is a public snapshot of the other account (id, name, avatarUrl only), from the
      // proposal; no avatar in v1.
      const counterpart = { id: sides.other.accountId, name: sides.other.name, avatarUrl: null };
      return reply.status(201).send({ ...matchStatusFor(state, roleId), counterpart });
    },
  );

  // (26) The recipient only; unknown and foreign ids get one 403, checked before "already decided".
  app.post(
    '/match-requests/:requestId/decision',
    {
      onRequest: auth('pair:confirm'),
      schema: { params: s.requestParams, body: s.decisionBody, response: { 200: s.decisionResponse } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { requestId } = req.params;
      if (!plausibleId(requestId)) throw requestForbidden();
      const [row] = await sql<{ thread_id: string }>(
        ctx.orm.em.fork(),
        `select thread_id from "${ctx.store.schema}".request_threads where request_id = ?`,
        [requestId],
      );
      if (!row) throw requestForbidden();
      const { state } = await runThreadCommand(
        ctx,
        row.thread_id,
        { type: 'DecideMatchRequest', data: { requestId, accountId, accept: req.body.accept } },
        [accountId],
        commandIdOf(req),
      );
      const request =
        state.status === 'none' ? undefined : state.match.requests.find((r) => r.requestId === requestId);
      if (state.status === 'none' || !request) throw requestForbidden(); // unreachable after the decider
      const accepted = request.status === 'accepted';
      return {
        ok: true as const,
        status: request.status,
        matchId: accepted ? state.match.matchId : null,
        conversationId: accepted ? state.match.conversationId : null,
      };
    },
  );
};
