import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { sql, type EntityManager } from '@oan/db';
import { awaitOwnWrites } from '@oan/projection';
import type { RagStatus } from '@oan/domain';
import { assertOwnsActiveGofer, WRITE_SOURCE } from '../commands/context';
import { postUserMessage } from '../commands/postUserMessage';
import { rethrowMapped } from './errors';
import type { GoferRouteDeps } from './gofers';
import * as s from './schemas';

/** A12: the recent page without `since`, and the cap of the `since` branch. */
export const RECENT_PAGE = 50;
export const SINCE_CAP = 200;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * §4.4 (14): an ISO-8601 instant, or null for anything else (which means "no since", never a 400).
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

interface MessageRow {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  created_at: string;
  kind: string | null;
  pairing: Record<string, unknown> | null;
  attachments:
    | {
        id: string;
        kind: 'photo' | 'document';
        name: string;
        mimeType: string;
        size: number;
        ragStatus: RagStatus | null;
      }[]
    | null;
}

// Attachments resolved server-side from the ids, in the message's order; deleted files drop out (A37).
const SELECT = `select m.id, m.role, m.content, m.kind, m.pairing, m.created_at as ts, m.position,
    to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
    (select jsonb_agg(jsonb_build_object('id', a.id, 'kind', a.kind, 'name', a.name, 'mimeType', a.mime_type,
                                         'size', a.size, 'ragStatus', a.rag_status) order by x.ord)
       from jsonb_array_elements_text(m.attachment_ids) with ordinality as x(aid, ord)
       join read.gofer_attachments a on a.id = x.aid and a.gofer_id = m.gofer_id and a.deleted_at is null
    ) as attachments
  from read.gofer_messages m where m.gofer_id = ?`;

async function history(em: EntityManager, goferId: string, since: Date | null): Promise<MessageRow[]> {
  if (since === null) {
    return sql<MessageRow>(
      em,
      `select * from (${SELECT} order by m.created_at desc, m.position desc limit ${RECENT_PAGE}) t
        order by ts, position`,
      [goferId],
    );
  }
  // Only the conversation proper: no system or pairing rows, no pending-query turns (§4.4 (14)).
  return sql<MessageRow>(
    em,
    `${SELECT} and m.role in ('user', 'assistant') and not m.pending_query and m.created_at > ?::timestamptz
      order by m.created_at, m.position limit ${SINCE_CAP}`,
    [goferId, since.toISOString()],
  );
}

type RoleRef = { roleId: string; name: string };
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

/** A pairing row missing its `self` (legacy rows) shows the queried Gofer instead (§4.4 (14)). */
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
    createdAt: row.created_at,
  };
  // A37: the key only when something is attached.
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

/** §4.4 (13), (14) under `/api/v1`; every unknown, deleted or foreign Gofer gets the same 403 (§6). */
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
        const [g] = await sql<{ name: string }>(em, 'select name from read.gofers where id = ?', [goferId]);
        self.name = g?.name ?? '';
      }
      return rows.map((r) => toItem(r, self));
    },
  );
};
