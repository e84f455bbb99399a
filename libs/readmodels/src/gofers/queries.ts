import { isoUtc, sql, type EntityManager } from '@oan/db';
import type { DiscoveryStatus, RagStatus } from '@oan/domain';

// Queries other code may run on the gofers tables (no service writes its own SQL against them).

/** One Gofer of an account's list (`GET /gofers`), its columns named as the API names them. */
export interface GoferListRow {
  goferId: string;
  name: string;
  description: string;
  discoveryStatus: DiscoveryStatus;
  createdAt: string;
}

/** An account's live Gofers, oldest first. */
export function goferList(em: EntityManager, accountId: string): Promise<GoferListRow[]> {
  return sql<GoferListRow>(
    em,
    `select g.id as "goferId", g.name, g.description, g.discovery_status as "discoveryStatus",
            ${isoUtc('g.created_at')} as "createdAt"
       from read.gofers g
      where g.account_id = ? and g.deleted_at is null
      order by g.created_at, g.id`,
    [accountId],
  );
}

/** A Gofer's name, or undefined when it was never projected. */
export async function goferName(em: EntityManager, goferId: string): Promise<string | undefined> {
  const [row] = await sql<{ name: string }>(em, 'select name from read.gofers where id = ?', [goferId]);
  return row?.name;
}

/** What a Gofer shows its counterparts in their events, or undefined when it was never projected. */
export interface GoferProfileRow {
  name: string;
  description: string;
  values: unknown;
  demands: unknown;
  deletedAt: Date | null;
}

export async function goferProfile(em: EntityManager, goferId: string): Promise<GoferProfileRow | undefined> {
  const [row] = await sql<GoferProfileRow>(
    em,
    'select name, description, "values", demands, deleted_at as "deletedAt" from read.gofers where id = ?',
    [goferId],
  );
  return row;
}

/** The first of `goferIds` that is deleted, or undefined when none is. */
export async function deletedGoferAmong(em: EntityManager, goferIds: string[]): Promise<string | undefined> {
  if (goferIds.length === 0) return undefined;
  const [row] = await sql<{ id: string }>(
    em,
    `select id from read.gofers where id in (?) and deleted_at is not null
      order by id limit 1`,
    [goferIds],
  );
  return row?.id;
}

/** One live file of a Gofer. */
export interface GoferFileRow {
  id: string;
  kind: 'photo' | 'document';
  name: string;
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
  storageKey: string;
}

const FILE_COLUMNS = `id, kind, name, mime_type as "mimeType", size::float8 as size, width, height,
  storage_key as "storageKey"`;

/** Every live photo and document of a Gofer, oldest first. */
export function goferFiles(em: EntityManager, goferId: string): Promise<GoferFileRow[]> {
  return sql<GoferFileRow>(
    em,
    `select ${FILE_COLUMNS} from read.gofer_attachments
      where gofer_id = ? and deleted_at is null order by created_at, id`,
    [goferId],
  );
}

/** The live file `attachmentId` if it belongs to one of `goferIds`. */
export async function goferFileOf(
  em: EntityManager,
  attachmentId: string,
  goferIds: string[],
): Promise<GoferFileRow | undefined> {
  if (goferIds.length === 0) return undefined;
  const [row] = await sql<GoferFileRow>(
    em,
    `select ${FILE_COLUMNS} from read.gofer_attachments
      where id = ? and gofer_id in (?) and deleted_at is null`,
    [attachmentId, goferIds],
  );
  return row;
}

/** One role-chat message with its live attachments, in the message's order. */
export interface GoferMessageRow {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  createdAt: string;
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

const MESSAGES = `select m.id, m.role, m.content, m.kind, m.pairing, m.created_at as ts, m.position,
    ${isoUtc('m.created_at')} as "createdAt",
    (select jsonb_agg(jsonb_build_object('id', a.id, 'kind', a.kind, 'name', a.name, 'mimeType', a.mime_type,
                                         'size', a.size, 'ragStatus', a.rag_status) order by x.ord)
       from jsonb_array_elements_text(m.attachment_ids) with ordinality as x(aid, ord)
       join read.gofer_attachments a on a.id = x.aid and a.gofer_id = m.gofer_id and a.deleted_at is null
    ) as attachments
  from read.gofer_messages m where m.gofer_id = ?`;

/** The newest `limit` messages of a Gofer's role-chat, oldest first. */
export function recentGoferMessages(
  em: EntityManager,
  goferId: string,
  limit: number,
): Promise<GoferMessageRow[]> {
  return sql<GoferMessageRow>(
    em,
    `select * from (${MESSAGES} order by m.created_at desc, m.position desc limit ${Number(limit)}) t
      order by ts, position`,
    [goferId],
  );
}

/**
 * The conversation proper after `since` (no system or pairing rows, no pending-query turns), oldest
 * first, at most `limit`.
 */
export function goferMessagesSince(
  em: EntityManager,
  goferId: string,
  since: Date,
  limit: number,
): Promise<GoferMessageRow[]> {
  return sql<GoferMessageRow>(
    em,
    `${MESSAGES} and m.role in ('user', 'assistant') and not m.pending_query and m.created_at > ?::timestamptz
      order by m.created_at, m.position limit ${Number(limit)}`,
    [goferId, since.toISOString()],
  );
}
