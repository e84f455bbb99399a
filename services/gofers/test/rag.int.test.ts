import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, silentLogger, type KafkaHandle } from '@oan/kafka';
import { FilesystemStorage, ObjectNotFoundError, type ObjectStorage } from '@oan/storage';
import { body, waitFor } from '@oan/testing';
import type { AttachmentAdded } from '@oan/domain';
import {
  boundUtf8,
  MAX_KNOWLEDGE_BYTES,
  parseAttachment,
  startRagReactor,
  type RunningRagReactor,
} from '../src/reactors/rag.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

let fleet: GoferFleet;
let storage: FilesystemStorage;
let dir: string;
let kafka: KafkaHandle;
let reactor: RunningRagReactor | undefined;

const startReactor = async () => {
  reactor = await startRagReactor({
    kafka,
    registry: new SchemaRegistry(SCHEMAS_DIR),
    orm: fleet.orm,
    store: fleet.ctx.store,
    writes: fleet.ctx.writes,
    storage,
    logger: createLogger('rag-test', 'warn'),
    topicPrefix: fleet.config.TOPIC_PREFIX,
  });
};
const stopReactor = async () => {
  await reactor?.stop();
  reactor = undefined;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oan-rag-'));
  // No listener needed: URLs are minted against a base the test never fetches.
  storage = new FilesystemStorage({
    dir,
    secret: 'rag-test-secret-rag-test-secret-rag-test',
    publicBaseUrl: 'http://127.0.0.1:9',
  });
  fleet = await startGoferFleet({}, { storage });
  kafka = createKafka({ brokers: fleet.config.KAFKA_BROKERS, clientId: 'rag-test', logger: silentLogger });
  await startReactor();
});
afterAll(async () => {
  await stopReactor();
  const admin = await kafka?.admin();
  await admin?.deleteGroups([`${fleet.config.TOPIC_PREFIX}gofers.rag`]).catch(() => undefined);
  await kafka?.close();
  await fleet?.close();
  await rm(dir, { recursive: true, force: true });
});

function form(fileName: string, type: string, bytes: Buffer) {
  const boundary = `----oan${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function uploadDocument(name: string, type: string, bytes: Buffer) {
  const { accountId, headers } = await fleet.account();
  const created = await fleet.app.inject({ method: 'POST', url: '/api/v1/gofers', payload: {}, headers });
  const { goferId } = body<{ goferId: string }>(created);
  const f = form(name, type, bytes);
  const res = await fleet.app.inject({
    method: 'POST',
    url: `/api/v1/gofers/${goferId}/attachments`,
    payload: f.payload,
    headers: { ...headers, ...f.headers },
  });
  expect(res.statusCode).toBe(201);
  const answer = body<{ attachment: { id: string }; ragStatus: string }>(res);
  return { accountId, goferId, id: answer.attachment.id, ragStatus: answer.ragStatus };
}

const ragChanges = async (attachmentId: string) =>
  (await fleet.events()).filter(
    (e) => e.type === 'AttachmentRagStatusChanged' && e.data.attachmentId === attachmentId,
  );

/** The read model the chat history reads (built by the projector from the same events). */
const readRow = async (attachmentId: string) =>
  (
    await sql<{ rag_status: string; knowledge: string | null }>(
      fleet.orm.em.fork(),
      'select rag_status, knowledge from read.gofer_attachments where id = ?',
      [attachmentId],
    )
  )[0];

const eventually = <T>(check: () => Promise<T | undefined | false>, what: string) =>
  waitFor(check, { timeoutMs: 30_000, intervalMs: 100, what });

describe('the RAG reactor', () => {
  it('turns a text document into knowledge: processing → ready, on the log and in the read model', async () => {
    const up = await uploadDocument(
      'about-me.txt',
      'text/plain',
      Buffer.from('\uFEFFI climb.\r\nI code in Rust.\r\n'),
    );
    expect(up.ragStatus).toBe('processing');
    const [change] = await eventually(async () => {
      const c = await ragChanges(up.id);
      return c.length > 0 && c;
    }, 'AttachmentRagStatusChanged');
    expect(change!.partitionKey).toBe(up.accountId);
    expect(change!.data).toMatchObject({
      goferId: up.goferId,
      attachmentId: up.id,
      ragStatus: 'ready',
      knowledge: 'I climb.\nI code in Rust.',
    });
    await eventually(async () => (await readRow(up.id))?.rag_status === 'ready', 'read model ready');
    expect((await readRow(up.id))?.knowledge).toBe('I climb.\nI code in Rust.');
  });

  it('reads a CSV as one line per row', async () => {
    const csv = 'skill,years\n"rust, async",3\n\npython,10\n';
    const up = await uploadDocument('skills.csv', 'text/csv', Buffer.from(csv));
    const [change] = await eventually(async () => {
      const c = await ragChanges(up.id);
      return c.length > 0 && c;
    }, 'csv parsed');
    expect(change!.data).toMatchObject({
      ragStatus: 'ready',
      knowledge: 'skill | years\nrust, async | 3\npython | 10',
    });
  });

  it('bounds the knowledge to 64 KiB', async () => {
    const up = await uploadDocument('long.txt', 'text/plain', Buffer.from('知'.repeat(40_000)));
    const [change] = await eventually(async () => {
      const c = await ragChanges(up.id);
      return c.length > 0 && c;
    }, 'long text parsed');
    const knowledge = change!.data.knowledge as string;
    expect(Buffer.byteLength(knowledge)).toBeLessThanOrEqual(MAX_KNOWLEDGE_BYTES);
    expect(knowledge).toBe('知'.repeat(Math.floor(MAX_KNOWLEDGE_BYTES / 3)));
  });

  it('leaves a pdf `unsupported`, with no status change', async () => {
    const up = await uploadDocument('cv.pdf', 'application/pdf', Buffer.from('%PDF-1.4\n%%EOF\n'));
    expect(up.ragStatus).toBe('unsupported');
    // Same account ⇒ same partition: once a later text of that account is parsed, the pdf was seen.
    await eventually(async () => (await readRow(up.id))?.rag_status === 'unsupported', 'pdf projected');
    const later = await uploadDocument('later.txt', 'text/plain', Buffer.from('x'));
    await eventually(async () => (await ragChanges(later.id)).length > 0, 'later text parsed');
    expect(await ragChanges(up.id)).toEqual([]);
  });

  it('parses uploads made while it was down, marks a vanished file failed, and a replay appends nothing', async () => {
    await stopReactor();
    const kept = await uploadDocument('kept.txt', 'text/plain', Buffer.from('still here'));
    const lost = await uploadDocument('lost.txt', 'text/plain', Buffer.from('gone'));
    await storage.delete(`${lost.goferId}/${lost.id}`);
    await startReactor();
    await eventually(
      async () => (await ragChanges(kept.id)).length > 0 && (await ragChanges(lost.id)).length > 0,
      'both answered',
    );
    expect((await ragChanges(kept.id))[0]!.data).toMatchObject({
      ragStatus: 'ready',
      knowledge: 'still here',
    });
    expect((await ragChanges(lost.id))[0]!.data).toMatchObject({ ragStatus: 'failed', knowledge: null });

    // Forget the group's offsets: the whole topic is delivered again, and nothing new is appended.
    const before = (await fleet.events()).length;
    await stopReactor();
    const admin = await kafka.admin();
    const groupId = `${fleet.config.TOPIC_PREFIX}gofers.rag`;
    await admin.deleteGroups([groupId]);
    await startReactor();
    const topic = `${fleet.config.TOPIC_PREFIX}gofers.events`;
    const ends = await admin.fetchTopicOffsets(topic);
    await eventually(async () => {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return ends.every((end) => {
        const p = committed!.partitions.find((x) => x.partition === end.partition);
        return BigInt(p?.offset ?? '-1') >= BigInt(end.offset) || end.offset === '0';
      });
    }, 'replay caught up');
    expect((await fleet.events()).length).toBe(before);
  });
});

describe('parseAttachment', () => {
  const added = (mimeType: string): AttachmentAdded => ({
    goferId: 'g',
    accountId: 'a',
    attachmentId: 'x',
    kind: 'document',
    name: 'n',
    mimeType,
    size: 1,
    width: null,
    height: null,
    storageKey: 'g/x',
    ragStatus: 'processing',
    createdAt: new Date().toISOString(),
  });
  const holding = (bytes: Buffer | Error): ObjectStorage => ({
    put: async () => undefined,
    get: async () => {
      if (bytes instanceof Error) throw bytes;
      return bytes;
    },
    delete: async () => undefined,
    signedUrl: async () => ({ url: '', expiresAt: 0 }),
    close: async () => undefined,
  });

  it('fails content that is not UTF-8 text, and a missing object', async () => {
    expect(await parseAttachment(holding(Buffer.from([0xff, 0xfe])), added('text/plain'))).toMatchObject({
      ragStatus: 'failed',
      knowledge: null,
    });
    expect(await parseAttachment(holding(new ObjectNotFoundError('g/x')), added('text/plain'))).toMatchObject(
      { ragStatus: 'failed' },
    );
    expect(await parseAttachment(holding(Buffer.from('a,"b\n')), added('text/csv'))).toMatchObject({
      ragStatus: 'failed',
    });
  });

  it('lets a storage outage through, so the record is retried rather than failed', async () => {
    await expect(
      parseAttachment(holding(new Error('connect ECONNREFUSED')), added('text/plain')),
    ).rejects.toThrow('ECONNREFUSED');
  });

  it('cuts on a character boundary', () => {
    expect(boundUtf8('aé', 2)).toBe('a');
    expect(boundUtf8('aé', 3)).toBe('aé');
  });
});
