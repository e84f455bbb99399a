import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { commandIdOf, principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { ApiKeyPermission } from '@oan/protocol';
import {
  loadAccountThreads,
  loadThread,
  runThreadCommand,
  type MatchingContext,
} from '../commands/context.ts';
import { ForbiddenError, NotFoundError } from '../domain/errors.ts';
import type { ExistingThread, ThreadState } from '../domain/threadState.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

export interface ThreadRouteDeps {
  ctx: MatchingContext;
  authenticator: Authenticator;
}

/**
 * The threads group's frozen convention, not probe-safe: unknown thread ⇒ 404; exists but none of
 * the caller's Gofers in it ⇒ 403.
 */
export function assertCallerIn(state: ThreadState, accountId: string): asserts state is ExistingThread {
  if (state.status === 'none') throw new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');
  if (state.a.accountId !== accountId && state.b.accountId !== accountId) {
    throw new ForbiddenError('THREAD_FORBIDDEN', 'Forbidden');
  }
}

/** The thread shape (the spec publishes none, so kept simple and additive), as seen by `accountId`. */
const threadView = (state: ExistingThread, accountId: string) => ({
  id: state.threadId,
  status: state.status,
  mode: state.mode,
  createdAt: state.proposedAt,
  participants: [state.a, state.b].map((side) => ({
    roleId: side.goferId,
    name: side.name,
    isMine: side.accountId === accountId,
  })),
});

/**
 * The thread routes (list, detail, transcript, pair/confirm) under `/api/v1`, registered only when
 * ENABLE_OPEN_API is on (all-or-nothing: off, none of them exist). Auth `multi-open`: JWTs of either
 * realm (threads have no realm gate) or an API key holding the route's permission (missing ⇒ 403
 * FORBIDDEN). Every answer is read from the thread's stream itself, never from a read model.
 */
export const threadRoutes: FastifyPluginAsyncZod<ThreadRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = (permission: ApiKeyPermission) =>
    requireAuth(deps.authenticator, { mode: 'multi-open', permission });

  // (20) newest first, at most `limit` (500) from `offset`: a page is bounded whatever the account's history.
  app.get(
    '/threads',
    {
      onRequest: auth('thread:read'),
      schema: { querystring: s.threadsQuery, response: { 200: s.threadList } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const threads = await loadAccountThreads(ctx, accountId, req.query);
      return threads.map((t) => threadView(t, accountId));
    },
  );

  // (21)
  app.get(
    '/threads/:id',
    {
      onRequest: auth('thread:read'),
      schema: { params: s.threadParams, response: { 200: s.threadItem } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { state } = await loadThread(ctx, req.params.id);
      assertCallerIn(state, accountId);
      return threadView(state, accountId);
    },
  );

  // (22) the session transcript in turn order, paged by `limit`/`offset` (default 50, max 200).
  app.get(
    '/threads/:id/messages',
    {
      onRequest: auth('message:read'),
      schema: { params: s.threadParams, querystring: s.messagesQuery, response: { 200: s.threadMessages } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { state, events } = await loadThread(ctx, req.params.id);
      assertCallerIn(state, accountId);
      const mine = state.a.accountId === accountId ? state.a.goferId : state.b.goferId;
      const { limit, offset } = req.query;
      return events
        .flatMap((e) => (e.type === 'SessionTurnAdded' ? [e.data] : []))
        .sort((x, y) => x.turnIndex - y.turnIndex)
        .slice(offset, offset + limit)
        .map((t) => ({
          id: t.turnId,
          roleId: t.senderGoferId,
          isMine: t.senderGoferId === mine,
          content: t.content,
          createdAt: t.createdAt,
        }));
    },
  );

  // (23) body `{ok, threadId, accepted}`; a thread not awaiting this side's answer is the 400 whose
  // text the engine matches and treats as "already paired".
  app.post(
    '/threads/:id/pair/confirm',
    {
      onRequest: auth('pair:confirm'),
      schema: { params: s.threadParams, body: s.confirmBody, response: { 200: s.confirmResponse } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { id: threadId } = req.params;
      const { roleId, accepted } = req.body;
      await runThreadCommand(
        ctx,
        threadId,
        { type: 'ConfirmPairing', data: { goferId: roleId, accountId, accepted } },
        [accountId],
        commandIdOf(req),
      );
      return { ok: true as const, threadId, accepted };
    },
  );
};
