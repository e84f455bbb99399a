import { randomUUID } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import type { MikroORM } from '@oan/db';
import type { EventStore } from '@oan/eventstore';
import {
  reactorMember,
  startReactorGroup,
  type KafkaHandle,
  type LogSink,
  type ReactorMember,
  type SchemaRegistry,
} from '@oan/kafka';
import type { WriteTracker } from '@oan/projection';
import { ObjectNotFoundError, type ObjectStorage } from '@oan/storage';
import { goferCommands, type GoferContext } from '../commands/context.ts';
import type { RagOutcome } from '../domain/attachments.ts';
import { goferStreamId, type AttachmentAdded, type GoferEvent } from '@oan/domain';

export interface RagReactorDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  orm: MikroORM;
  store: EventStore;
  writes: WriteTracker;
  storage: ObjectStorage;
  logger: LogSink;
  topicPrefix: string;
  now?: () => Date;
}

export interface RunningRagReactor {
  readonly groupId: string;
  stop(): Promise<void>;
}

/** The knowledge kept per document (UTF-8 bytes); the rest of a long file is dropped. */
export const MAX_KNOWLEDGE_BYTES = 64 * 1024;

/**
 * Background parsing of text documents (the upload's `ragStatus`). Driven by the log, not by a queue in
 * memory: every `AttachmentAdded` still `processing` is read back from storage, parsed and answered
 * with `AttachmentRagStatusChanged` before its offset is committed. A crash redelivers the record,
 * and `RecordRagStatus` appends only `processing` → final, so a redelivery or a replay appends nothing.
 */
export function ragReactor(deps: RagReactorDeps): ReactorMember {
  const { logger, storage } = deps;
  const ctx: GoferContext = {
    orm: deps.orm,
    store: deps.store,
    writes: deps.writes,
    now: deps.now ?? (() => new Date()),
    ids: randomUUID,
  };
  // A new group starts from the beginning: uploads made before it existed still get parsed.
  return reactorMember<GoferEvent>({
    group: `${deps.topicPrefix}gofers.rag`,
    topic: `${deps.topicPrefix}gofers.events`,
    on: {
      AttachmentAdded: async ({ data: added }) => {
        if (added.ragStatus !== 'processing') return;
        const outcome = await parseAttachment(storage, added);
        const command = { type: 'RecordRagStatus', data: outcome } as const;
        const appended =
          (await goferCommands(ctx)(goferStreamId(added.goferId), command)).appended.length > 0;
        logger.info(
          {
            goferId: added.goferId,
            attachmentId: added.attachmentId,
            ragStatus: outcome.ragStatus,
            appended,
          },
          'document parsed',
        );
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export async function startRagReactor(deps: RagReactorDeps): Promise<RunningRagReactor> {
  const loop = await startReactorGroup({ ...deps, members: [ragReactor(deps)] });
  return { groupId: loop.groupId, stop: () => loop.stop() };
}

/**
 * Reads the bytes back and turns them into knowledge. A missing object or unparseable content is a
 * final `failed`; any other error (storage or database unavailable) throws, so the record is
 * redelivered and retried rather than marked failed by a passing outage.
 */
export async function parseAttachment(storage: ObjectStorage, a: AttachmentAdded): Promise<RagOutcome> {
  const ids = { goferId: a.goferId, attachmentId: a.attachmentId };
  let bytes: Buffer;
  try {
    bytes = await storage.get(a.storageKey);
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return { ...ids, ragStatus: 'failed', knowledge: null };
    throw err;
  }
  try {
    const knowledge = boundUtf8(extractText(a.mimeType, bytes), MAX_KNOWLEDGE_BYTES);
    return { ...ids, ragStatus: 'ready', knowledge };
  } catch {
    return { ...ids, ragStatus: 'failed', knowledge: null };
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** text/plain: the UTF-8 text; text/csv: one line per row, cells separated by ` | `. */
export function extractText(mimeType: string, bytes: Buffer): string {
  const text = utf8.decode(bytes).replace(/\r\n?/g, '\n');
  if (text.includes('\u0000')) throw new Error('NUL in text'); // jsonb and Avro consumers refuse it
  switch (mimeType) {
    case 'text/plain':
      return text.trim();
    case 'text/csv': {
      const rows = parseCsv(text, {
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true,
      });
      return rows.map((cells) => cells.map((c) => c.trim()).join(' | ')).join('\n');
    }
    default:
      throw new Error(`no parser for ${mimeType}`);
  }
}

/** At most `max` UTF-8 bytes, cut on a character boundary. */
export function boundUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1; // never split a multi-byte sequence
  return bytes.subarray(0, end).toString('utf8');
}
