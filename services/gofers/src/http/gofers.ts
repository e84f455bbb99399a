import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { awaitOwnWrites } from '@oan/projection';
import { goferList } from '@oan/readmodels';
import { deletedInStore, goferWebUrl, WRITE_SOURCE, type GoferContext } from '../commands/context.ts';
import { createGofer } from '../commands/createGofer.ts';
import { deleteGofer } from '../commands/deleteGofer.ts';
import type { RelayControl } from '../relay/host.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

/** What DELETE needs of the object-storage adapter (libs/storage): removing bytes by key. */
export interface FileRemover {
  delete(key: string): Promise<unknown>;
}

export interface GoferRouteDeps {
  ctx: GoferContext;
  authenticator: Authenticator;
  /** null when no object-storage adapter is configured (a deployment switch). */
  storage: FileRemover | null;
  /** The ConnectOnion relay host, when the relay is configured: a deleted Gofer leaves the relay. */
  relay?: RelayControl | null;
}

/** Create, list and delete Gofers under `/api/v1`, registered only when ENABLE_OPEN_API is on. */
export const goferRoutes: FastifyPluginAsyncZod<GoferRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = (permission: 'role:create' | 'role:read' | 'role:delete') =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  // (11)
  app.post(
    '/gofers',
    {
      onRequest: auth('role:create'),
      schema: { body: s.createGoferBody, response: { 201: s.createGoferResponse } },
    },
    async (req, reply) => {
      const triggers = req.body?.humanReviewTriggers?.map((t) => t.trim()).filter((t) => t !== '');
      const principal = principalOf(req);
      const created = await createGofer(ctx, {
        accountId: principal.accountId,
        sourcePlatform: principal.sourcePlatform,
        ...(req.body?.locale !== undefined ? { locale: req.body.locale } : {}),
        ...(triggers ? { humanReviewTriggers: triggers } : {}),
      });
      return reply.status(201).send(created);
    },
  );

  // (12) oldest first. The owner's own creates and deletes are applied before reading (invariant
  // 4); the store check keeps a deleted Gofer out even if the projector is behind.
  app.get(
    '/gofers',
    { onRequest: auth('role:read'), schema: { response: { 200: s.goferList } } },
    async (req) => {
      const accountId = principalOf(req).accountId;
      await awaitOwnWrites(ctx.orm, ctx.writes, accountId, [WRITE_SOURCE]);
      const listed = await goferList(ctx.orm.em.fork(), accountId);
      const deleted = await deletedInStore(
        ctx,
        listed.map((g) => g.goferId),
      );
      const rows = listed.filter((g) => !deleted.has(g.goferId));
      return rows.map((r) => ({ ...r, ...goferWebUrl(ctx, r.goferId) }));
    },
  );

  // Delete: unknown ⇒ 404, foreign ⇒ 403 (the endpoint's own rule beats the uniform 403). Stored files go after the commit, best effort.
  app.delete(
    '/gofers/:goferId',
    {
      onRequest: auth('role:delete'),
      schema: { params: s.goferParams, response: { 200: s.deletedResponse } },
    },
    async (req) => {
      const { goferId } = req.params;
      const { storageKeys } = await deleteGofer(ctx, { accountId: principalOf(req).accountId, goferId });
      await deps.relay?.sync(goferId);
      if (deps.storage && storageKeys.length > 0) {
        const storage = deps.storage;
        const results = await Promise.allSettled(storageKeys.map((key) => storage.delete(key)));
        const failed = results.filter((r) => r.status === 'rejected').length;
        if (failed > 0)
          req.log.warn({ goferId, failed }, 'could not delete some stored files of a deleted Gofer');
      }
      return { deleted: true as const, goferId };
    },
  );
};
