import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { sql } from '@oan/db';
import { notFound } from '@oan/http';
import { awaitOwnWrites, type WriteSource } from '@oan/projection';
import { assertOwnsActiveGofer, plausibleGoferId, WRITE_SOURCE } from '../commands/context';
import { rethrowMapped } from './errors';
import type { GoferRouteDeps } from './gofers';
import * as s from './schemas';

const ISO = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The whitelist of §4.4 (18) from `read.pairing_cards` (the projector's, one row per side): no
 * documents, cursors, action items, account ids or card payload. Title and preview stay null while
 * the card is pending, whatever a row holds.
 */
const SELECT = `select c.id, c.thread_id as "threadId", c.gofer_id as "roleId", c.role_name as "roleName",
    c.pairing_status as "pairingStatus", c.dynamic_status as "dynamicStatus",
    ${ISO('c.paired_at')} as "pairedAt", ${ISO('c.updated_at')} as "updatedAt",
    case when c.dynamic_status = 'pending' then null else c.card_title end as "cardTitle",
    case when c.dynamic_status = 'pending' then null else c.summary_preview end as "summaryPreview",
    c.opponent_role_name as "opponentRoleName", c.opponent_user_name as "opponentUserName",
    c.opponent_user_avatar_url as "opponentUserAvatarUrl", c.opponent_profile_title as "opponentProfileTitle",
    c.opponent_profile_info_text as "opponentProfileInfoText", c.cover_photo as "coverPhoto",
    c.photo_count as "photoCount"
  from read.pairing_cards c where c.gofer_id = ?`;

/** Exactly the card's keys, in its order (a row never leaks a column the whitelist does not name). */
const toCard = (r: s.PairingSummaryCard): s.PairingSummaryCard => ({
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

/**
 * §4.4 (18), (19) under `/api/v1`. Unknown, deleted and foreign Gofers get the chat routes' one
 * probe-safe 403 (§6); a thread without this Gofer's card (not created yet, or not its thread) is 404.
 */
/** The matching store's read-your-writes source: the cards change with its thread events. */
const MATCHING_SOURCE: WriteSource = 'matching';

export const pairingRoutes: FastifyPluginAsyncZod<GoferRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const onRequest = requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'role:read' });

  /**
   * The owner's own writes are applied before reading (invariant 4): its Gofer writes (e.g. a delete)
   * and, since the cards are the matching context's read model, its matching writes too (a pairing
   * it just confirmed, a match it just requested or decided: issue 12).
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
      const rows = await sql<s.PairingSummaryCard>(
        ctx.orm.em.fork(),
        `${SELECT} order by c.paired_at desc, c.thread_id limit ?`,
        [goferId, req.query.limit],
      );
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
      const [row] = await sql<s.PairingSummaryCard>(ctx.orm.em.fork(), `${SELECT} and c.thread_id = ?`, [
        goferId,
        threadId,
      ]);
      if (!row) throw notFound('Pairing summary not found');
      return toCard(row);
    },
  );
};
