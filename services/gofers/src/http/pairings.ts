import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { notFound } from '@oan/http';
import { awaitOwnWrites, type WriteSource } from '@oan/projection';
import { pairingCardOf, pairingCardsOf, type PairingCardRow } from '@oan/readmodels';
import { assertOwnsActiveGofer, plausibleGoferId, WRITE_SOURCE } from '../commands/context.ts';
import { rethrowMapped } from './errors.ts';
import type { GoferRouteDeps } from './gofers.ts';
import * as s from './schemas.ts';

/** Exactly the card's keys, in its order (a row never leaks a column the whitelist does not name). */
const toCard = (r: PairingCardRow): s.PairingSummaryCard => ({
  id: r.id,
  threadId: r.threadId,
  roleId: r.roleId,
  roleName: r.roleName,
  pairingStatus: r.pairingStatus,
  dynamicStatus: r.dynamicStatus,
  pairedAt: r.pairedAt,
  updatedAt: r.updatedAt,
  cardTitle: r.cardTitle,
  summaryPreview: r.summaryPreview,
  opponentRoleName: r.opponentRoleName,
  opponentUserName: r.opponentUserName,
  opponentUserAvatarUrl: r.opponentUserAvatarUrl,
  opponentProfileTitle: r.opponentProfileTitle,
  opponentProfileInfoText: r.opponentProfileInfoText,
  coverPhoto: r.coverPhoto,
  photoCount: Number(r.photoCount),
});

/** The matching store's read-your-writes source: the cards change with its thread events. */
const MATCHING_SOURCE: WriteSource = 'matching';

/**
 * The pairing list and one pairing's card (`GET /gofers/:goferId/pairings[/:threadId]`) under
 * `/api/v1`. Unknown, deleted and foreign Gofers get the chat routes' one probe-safe 403, so a probe
 * cannot tell them apart; a thread without this Gofer's card (not created yet, or not its thread) is 404.
 */
export const pairingRoutes: FastifyPluginAsyncZod<GoferRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const onRequest = requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'role:read' });

  /**
   * The owner's own writes are applied before reading (read-your-writes): its Gofer writes (e.g. a delete)
   * and, since the cards are the matching context's read model, its matching writes too (a pairing
   * it just confirmed, a match it just requested or decided).
   */
  async function ownedGofer(accountId: string, goferId: string): Promise<void> {
    await assertOwnsActiveGofer(ctx, accountId, goferId);
    await awaitOwnWrites(ctx.orm, ctx.writes, accountId, [WRITE_SOURCE, MATCHING_SOURCE]);
  }

  // (18) newest first.
  app.get(
    '/gofers/:goferId/pairings',
    {
      onRequest,
      schema: { params: s.goferParams, querystring: s.pairingsQuery, response: { 200: s.pairingList } },
    },
    async (req) => {
      const { goferId } = req.params;
      await ownedGofer(principalOf(req).accountId, goferId);
      const rows = await pairingCardsOf(ctx.orm.em.fork(), goferId, req.query.limit);
      return { items: rows.map(toCard) };
    },
  );

  // (19)
  app.get(
    '/gofers/:goferId/pairings/:threadId',
    {
      onRequest,
      schema: { params: s.pairingParams, response: { 200: s.pairingSummaryCard } },
    },
    async (req) => {
      const { goferId, threadId } = req.params;
      await ownedGofer(principalOf(req).accountId, goferId);
      // Thread ids are UUIDs like Gofer ids; anything else (a NUL…) never reaches a query.
      if (!plausibleGoferId(threadId)) throw notFound('Pairing summary not found');
      const row = await pairingCardOf(ctx.orm.em.fork(), goferId, threadId);
      if (!row) throw notFound('Pairing summary not found');
      return toCard(row);
    },
  );
};
