import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOanJwt } from '@oan/auth';
import { openDatabase, sql, type MikroORM } from '@oan/db';
import { API_KEY_PERMISSIONS } from '@oan/protocol';
import { loadConfig, z } from '@oan/config';
import { createStorage, storageEnv, type StorageSetup } from '@oan/storage';
import { readModelMigrations as migrations } from '@oan/readmodels';
import type { buildApp } from '../src/app.ts';
import { loadMatchingConfig } from '../src/config.ts';
import { COUNTERPART_URL_TTL_SECONDS } from '../src/http/counterpartAttachments.ts';
import { body, expectError } from '@oan/testing';
import { JWT_SECRET, startMatchingFleet, type MatchingFleet, type Side } from './helpers.ts';

/**
 * The counterpart-attachment URL: signed, self-authorizing, on object storage's origin; unknown
 * thread 404, non-participant 403, unknown attachment 404. The files are stored and served as the
 * gofers process does (fs driver, its listener started here); the matching app signs with its own
 * configuration (`createStorage(config, { listen: false })`: same directory and port, key derived
 * from JWT_SECRET).
 */
let fleet: MatchingFleet;
let projectorOrm: MikroORM;
let dir: string;
let gofersStorage: StorageSetup;
let app: Awaited<ReturnType<typeof buildApp>>;

beforeAll(async () => {
  fleet = await startMatchingFleet();
  projectorOrm = await openDatabase({ url: fleet.config.DATABASE_URL, schema: 'projector', migrations });
  dir = await mkdtemp(join(tmpdir(), 'oan-counterpart-'));
  const storageVars = { STORAGE_DRIVER: 'fs', STORAGE_DIR: dir, HOST: '127.0.0.1' };
  // The gofers process's side: the same variables, and it serves the files (its listener).
  const gofersConfig = {
    ...loadConfig(storageEnv.extend({ HOST: z.string() }), { ...storageVars, STORAGE_PORT: '0' }),
    JWT_SECRET,
  };
  gofersStorage = (await createStorage(gofersConfig))!;
  const matchingConfig = loadMatchingConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    ID_SECRET: fleet.config.ID_SECRET,
    DATABASE_URL: fleet.config.DATABASE_URL,
    REDIS_PREFIX: fleet.config.REDIS_PREFIX,
    ...storageVars,
    STORAGE_PORT: String(gofersStorage.listener!.port),
  });
  const signer = await createStorage(matchingConfig, { listen: false });
  expect(signer?.listener).toBeUndefined();
  app = await fleet.buildAnother({}, { config: matchingConfig, storage: signer!.storage });
});

afterAll(async () => {
  await gofersStorage?.listener?.close();
  await projectorOrm?.close(true);
  await fleet?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Headers = Record<string, string>;
type App = typeof app;
const url = (threadId: string, attachmentId: string) =>
  `/api/v1/threads/${threadId}/counterpart-attachments/${attachmentId}/url`;
const get = (threadId: string, attachmentId: string, headers: Headers, on: App = app) =>
  on.inject({ method: 'GET', url: url(threadId, attachmentId), headers });

/** A stored file and its `read.gofer_attachments` row, as the upload route and the projector make them. */
async function attach(
  owner: Pick<Side, 'goferId' | 'accountId'>,
  opts: { kind?: 'photo' | 'document'; deleted?: boolean; bytes?: Buffer; mimeType?: string } = {},
) {
  const id = randomUUID();
  const key = `${owner.goferId}/${id}`;
  const bytes = opts.bytes ?? Buffer.from(`bytes of ${id}\u0000\u00ff`, 'latin1');
  const mimeType = opts.mimeType ?? (opts.kind === 'document' ? 'application/pdf' : 'image/png');
  await gofersStorage.storage.put(key, bytes, {
    contentType: mimeType,
    fileName: `${id}.bin`,
    size: bytes.length,
  });
  await sql(
    projectorOrm.em.fork(),
    `insert into read.gofer_attachments (id, gofer_id, account_id, kind, name, mime_type, size, storage_key,
       rag_status, created_at, deleted_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'ready', now(), ?)`,
    [
      id,
      owner.goferId,
      owner.accountId,
      opts.kind ?? 'photo',
      `${id}.bin`,
      mimeType,
      bytes.length,
      key,
      opts.deleted ? new Date().toISOString() : null,
    ],
  );
  return { id, bytes, mimeType };
}

describe('GET /threads/:threadId/counterpart-attachments/:attachmentId/url', () => {
  it('signs the counterpart’s photo and document; the URL downloads the exact bytes without credentials', async () => {
    const { threadId, a, b } = await fleet.pair('confirm');
    const photo = await attach(b, { kind: 'photo' });
    const doc = await attach(a, { kind: 'document', bytes: Buffer.from('%PDF-1.4 hello') });
    for (const [caller, file] of [
      [a, photo],
      [b, doc],
    ] as const) {
      const before = Date.now();
      const res = await get(threadId, file.id, caller.headers);
      expect(res.statusCode).toBe(200);
      const signed = body<{ url: string; expiresAt: unknown }>(res);
      expect(Object.keys(signed).sort()).toEqual(['expiresAt', 'url']);
      expect(typeof signed.expiresAt).toBe('number');
      const expiresAt = signed.expiresAt as number;
      expect(expiresAt).toBeGreaterThan(before);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + COUNTERPART_URL_TTL_SECONDS * 1000 + 1000);
      // Signed URLs point at object storage's origin, not the API's; no Authorization header at all.
      expect(signed.url.startsWith(`${gofersStorage.listener!.url}/files/`)).toBe(true);
      const download = await fetch(signed.url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe(file.mimeType);
      expect(Buffer.from(await download.arrayBuffer()).equals(file.bytes)).toBe(true);
      // The URL is the whole authorization: a tampered signature is refused.
      const tampered = signed.url.replace(
        /sig=([0-9a-f])/,
        (_m, c: string) => `sig=${c === '0' ? '1' : '0'}`,
      );
      expect((await fetch(tampered)).status).toBe(403);
    }
  });

  it('answers 404 for the caller’s own, a third Gofer’s, a deleted, an unknown and a malformed attachment', async () => {
    const { threadId, a, b } = await fleet.pair('auto');
    const other = await fleet.pair('auto');
    const own = await attach(a);
    const thirds = await attach(other.a);
    const deleted = await attach(b, { deleted: true });
    const ids = [own.id, thirds.id, deleted.id, randomUUID(), 'not a uuid', '%00'];
    const answers = [];
    for (const id of ids) {
      const res = await get(threadId, id, a.headers);
      expectError(res, 404, 'NOT_FOUND');
      answers.push(res.body);
    }
    // One final answer, whichever the reason (clients never retry).
    expect(new Set(answers).size).toBe(1);
  });

  it('answers an unknown thread 404 and a non-participant 403, before looking at the attachment', async () => {
    const { threadId, b } = await fleet.pair('confirm');
    const photo = await attach(b);
    const stranger = await fleet.account();
    expectError(await get(randomUUID(), photo.id, b.headers), 404, 'NOT_FOUND');
    expectError(await get('not-a-thread', photo.id, b.headers), 404, 'NOT_FOUND');
    const known = await get(threadId, photo.id, stranger.headers);
    const unknown = await get(threadId, randomUUID(), stranger.headers);
    expectError(known, 403, 'FORBIDDEN');
    expect(unknown.statusCode).toBe(403);
    expect(unknown.body).toBe(known.body);
    // The same frozen 403 as the other threads routes.
    const detail = await app.inject({
      method: 'GET',
      url: `/api/v1/threads/${threadId}`,
      headers: stranger.headers,
    });
    expect(detail.statusCode).toBe(403);
    expect(known.body).toBe(detail.body);
  });

  it('is multi-open with the thread:read permission, and needs a credential (401)', async () => {
    const { threadId, a, b } = await fleet.pair('confirm');
    const photo = await attach(b);
    const noRead = await fleet.account({
      permissions: API_KEY_PERMISSIONS.filter((p) => p !== 'thread:read'),
    });
    expectError(await get(threadId, photo.id, noRead.headers), 403, 'FORBIDDEN');
    for (const realm of ['oan', 'gofers']) {
      const jwt = await signOanJwt(JWT_SECRET, { accountId: a.accountId, realm, ttlSeconds: 60 });
      expect((await get(threadId, photo.id, { authorization: `Bearer ${jwt}` })).statusCode).toBe(200);
    }
    expectError(await get(threadId, photo.id, {}), 401, 'UNAUTHORIZED');
    expectError(
      await get(threadId, photo.id, { authorization: 'Bearer gofers_deadbeef' }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('answers 404 for every attachment without a storage adapter (STORAGE_DRIVER defaults to none)', async () => {
    expect(fleet.config.STORAGE_DRIVER).toBe('none');
    const { threadId, a, b } = await fleet.pair('confirm');
    const photo = await attach(b);
    expectError(await get(threadId, photo.id, a.headers, fleet.app), 404, 'NOT_FOUND');
    // The thread rules still come first.
    expectError(await get(randomUUID(), photo.id, a.headers, fleet.app), 404, 'NOT_FOUND');
    const stranger = await fleet.account();
    expectError(await get(threadId, photo.id, stranger.headers, fleet.app), 403, 'FORBIDDEN');
  });
});
