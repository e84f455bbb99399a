import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { commandIdOf, principalOf, requireAuth } from '@oan/auth';
import type { EntityManager } from '@oan/db';
import { awaitOwnWrites } from '@oan/projection';
import { goferMessagesSince, goferName, recentGoferMessages, type GoferMessageRow } from '@oan/readmodels';
import { assertOwnsActiveGofer, WRITE_SOURCE } from '../commands/context.ts';
import { postUserMessage } from '../commands/postUserMessage.ts';
import { rethrowMapped } from './errors.ts';
import type { GoferRouteDeps } from './gofers.ts';
import * as s from './schemas.ts';

/**
 * The history page: the newest 50 without `since`, and at most 200 (strictly after it) with it,
 * always oldest first.
 */
export const RECENT_PAGE = 50;
export const SINCE_CAP = 200;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The history's `since`: an ISO-8601 instant, or null for anything else (which means "no since", never a 400).
 * A zone-less time is UTC; a `+` a client left unencoded arrives as a space and is put back.
 */
export function parseSince(raw: unknown): Date | null {
  if (typeof raw !== 'string') return null;
  let v = raw.trim().replace(/ (\d{2}:?\d{2})$/, '+$1');
  if (!ISO_8601.test(v)) return null;
  if (/T/i.test(v) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(v)) v += 'Z';
  const d = new Date(v.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(d.getTime())) return null;
  // Nothing was written before 1970; Postgres refuses year 0, which JS would happily pass on.
  return d.getTime() < 0 ? new Date(0) : d;
}

type MessageRow = GoferMessageRow;

function history(em: EntityManager, goferId: string, since: Date | null): Promise<MessageRow[]> {
  // Only the conversation proper after `since`: no system or pairing rows, no pending-query turns.
  return since === null
    ? recentGoferMessages(em, goferId, RECENT_PAGE)
    : goferMessagesSince(em, goferId, since, SINCE_CAP);
}

type RoleRef = { roleId: string; name: string };
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

/** A pairing row missing its `self` (legacy rows) shows the queried Gofer instead. */
const needsSelf = (r: MessageRow) =>
  r.kind === 'pairing' && !(str(obj(obj(r.pairing).self).roleId) && str(obj(obj(r.pairing).self).name));

function pairingOf(p: Record<string, unknown> | null, self: RoleRef) {
  const counterpart = obj(p?.counterpart);
  const own = obj(p?.self);
  const threadId = str(p?.threadId);
  const roleId = str(counterpart.roleId);
  // Rows without a thread or a counterpart id are plain text: neither `kind` nor `pairing`.
  if (!threadId || !roleId) return null;
  return {
    threadId,
    self: { roleId: str(own.roleId) ?? self.roleId, name: str(own.name) ?? self.name },
    counterpart: { roleId, name: str(counterpart.name) ?? '' },
  };
}

function toItem(row: MessageRow, self: RoleRef): s.ChatMessageItem {
  const item: s.ChatMessageItem = {
    id: row.id,
    role: row.role,
    content: row.content,
    createdAt: row.createdAt,
  };
  // The key only when something is attached: a message whose every attachment was deleted has none, not `[]`.
  if (row.attachments && row.attachments.length > 0) {
    item.attachments = row.attachments.map((a) => ({
      id: a.id,
      kind: a.kind,
      name: a.name,
      mimeType: a.mimeType,
      size: Number(a.size),
      ...(a.kind === 'document' && a.ragStatus ? { ragStatus: a.ragStatus } : {}),
    }));
  }
  const pairing = row.kind === 'pairing' ? pairingOf(row.pairing, self) : null;
  if (pairing) Object.assign(item, { kind: 'pairing' as const, pairing });
  return item;
}

/**
 * Posting to and reading the role-chat under `/api/v1`; every unknown, deleted or foreign Gofer
 * gets the same 403, so a probe cannot tell them apart.
 */
export const chatRoutes: FastifyPluginAsyncZod<GoferRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = (permission: 'message:send' | 'message:read') =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  app.post(
    '/gofers/:goferId/chat/messages',
    {
      onRequest: auth('message:send'),
      schema: { params: s.goferParams, body: s.chatMessageBody, response: { 202: s.acceptedResponse } },
    },
    async (req, reply) => {
      await postUserMessage(ctx, {
        accountId: principalOf(req).accountId,
        goferId: req.params.goferId,
        ...req.body,
        attachmentsEnabled: deps.storage !== null,
        commandId: commandIdOf(req),
      });
      return reply.status(202).send({ accepted: true as const });
    },
  );

  app.get(
    '/gofers/:goferId/chat/messages',
    {
      onRequest: auth('message:read'),
      schema: { params: s.goferParams, querystring: s.chatHistoryQuery, response: { 200: s.chatHistory } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { goferId } = req.params;
      await assertOwnsActiveGofer(ctx, accountId, goferId);
      await awaitOwnWrites(ctx.orm, ctx.writes, accountId, [WRITE_SOURCE]);
      const em = ctx.orm.em.fork();
      const rows = await history(em, goferId, parseSince(req.query.since));
      const self = { roleId: goferId, name: '' };
      if (rows.some(needsSelf)) {
        self.name = (await goferName(em, goferId)) ?? '';
      }
      return rows.map((r) => toItem(r, self));
    },
  );
};
