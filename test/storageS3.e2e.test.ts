import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { contentDisposition, S3Storage } from '@oan/storage';
import { ensureInfra, pdf, TestFleet, waitFor } from '@oan/testing';
import { matchTwoAccounts, type Answer, type Match } from './support.ts';

/**
 * The fleet on STORAGE_DRIVER=s3 against S3Proxy (infra/s3proxy, a real S3-compatible server on
 * 127.0.0.1:9300): gofers, matching and conversations store and sign through S3 presigned URLs, and
 * the other side of a match downloads the files from the bucket with no credentials.
 */
const ENDPOINT = 'http://127.0.0.1:9300';
const BUCKET = `oan-e2e-${randomUUID()}`;
const S3_ENV = {
  STORAGE_DRIVER: 's3',
  S3_ENDPOINT: ENDPOINT,
  S3_BUCKET: BUCKET,
  S3_REGION: 'us-east-1',
  S3_ACCESS_KEY_ID: 'local-identity',
  S3_SECRET_ACCESS_KEY: 'local-credential',
  S3_FORCE_PATH_STYLE: 'true',
};
let admin: S3Storage;
let fleet: TestFleet;
let m: Match;

beforeAll(async () => {
  ensureInfra(); // infra/up.sh starts S3Proxy too
  // The services expect the bucket to exist (as with MinIO or AWS, it is provisioned, not created).
  admin = new S3Storage({
    endpoint: ENDPOINT,
    bucket: BUCKET,
    region: S3_ENV.S3_REGION,
    accessKeyId: S3_ENV.S3_ACCESS_KEY_ID,
    secretAccessKey: S3_ENV.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
  });
  await admin.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  // The storing processes (gofers, matching, conversations) get the s3 driver and its variables.
  fleet = await TestFleet.start({ env: S3_ENV });
  m = await matchTwoAccounts(fleet, ['s3-a', 's3-b']);
});
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
  if (admin) {
    const listed = await admin.client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    for (const { Key } of listed.Contents ?? []) {
      await admin.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
    }
    await admin.client.send(new DeleteBucketCommand({ Bucket: BUCKET }));
    await admin.close();
  }
});

/** A multipart upload through the edge, one part `file`, as a connector sends it. */
async function upload(apiKey: string, path: string, bytes: Buffer, type: string, name: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${fleet.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as unknown } as Answer;
}

/** The bucket's key a presigned path-style URL points at. */
const keyOf = (url: string) => {
  const u = new URL(url);
  expect(u.origin).toBe(ENDPOINT);
  expect(u.pathname.startsWith(`/${BUCKET}/`)).toBe(true);
  expect(u.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
  return u.pathname.slice(BUCKET.length + 2);
};

/** Downloads `url` with no credentials, then with an OAN key (ignored), expecting `bytes` both times. */
async function expectDownload(url: string, bytes: Buffer, type: string, name: string, oanKey: string) {
  const variants: Record<string, string>[] = [{}, { authorization: `Bearer ${oanKey}` }];
  for (const headers of variants) {
    const res = await fetch(url, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('content-disposition')).toBe(contentDisposition(name));
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  }
}

describe('object storage on S3 (S3Proxy) through the whole fleet', () => {
  it('a conversation attachment: stored in the bucket, the other side downloads it by its signed URL', async () => {
    const bytes = pdf(20_000 + Math.floor(Math.random() * 1000));
    const name = 'Angebot – Q3.pdf';
    const up = await upload(
      m.a.apiKey,
      `/conversations/${m.conversationId}/attachments`,
      bytes,
      'application/pdf',
      name,
    );
    expect(up.status, up.text).toBe(201);
    const { attachment } = up.body as { attachment: { attachmentId: string; size: number } };
    expect(attachment.size).toBe(bytes.length);
    const sent = await m.ca.rest<{ id: string }>('POST', `/conversations/${m.conversationId}/messages`, {
      attachmentIds: [attachment.attachmentId],
    });
    expect(sent.status, sent.text).toBe(201);
    await waitFor(
      () =>
        m.cb.delivered.find(
          (e: OanEventEnvelope) => e.type === 'relay_message' && e.payload.messageId === sent.body.id,
        ),
      { timeoutMs: 30_000, what: 'the relay_message with the attachment on the other side' },
    );

    const signed = await m.cb.rest<{ url: string }>(
      'GET',
      `/conversations/${m.conversationId}/attachments/${attachment.attachmentId}/url`,
    );
    expect(signed.status, signed.text).toBe(200);
    const key = keyOf(signed.body.url);
    expect(key).toBe(`conversations/${m.conversationId}/${attachment.attachmentId}`);
    // The bytes are in the bucket itself, not in the fleet's fs directory.
    expect((await admin.get(key)).equals(bytes)).toBe(true);
    await expectDownload(signed.body.url, bytes, 'application/pdf', name, m.b.apiKey);
    expect(existsSync(join(fleet.logDir, 'storage'))).toBe(false);
    // Tampered: the other side's URL does not open another key of the bucket.
    const other = signed.body.url.replace(attachment.attachmentId, randomUUID());
    expect((await fetch(other)).status).toBe(403);
  });

  it("a Gofer chat attachment: stored, parsed back from S3, and the counterpart's signed URL downloads it", async () => {
    const text = `Our team ships payment APIs from Berlin. ${randomUUID()}\n`;
    const bytes = Buffer.from(text);
    const up = await upload(m.a.apiKey, `/gofers/${m.ga}/attachments`, bytes, 'text/plain', 'about-us.txt');
    expect(up.status, up.text).toBe(201);
    const { attachment } = up.body as { attachment: { id: string; url: string; ragStatus: string } };
    expect(attachment.ragStatus).toBe('processing');
    expect(keyOf(attachment.url)).toBe(`${m.ga}/${attachment.id}`);
    await expectDownload(attachment.url, bytes, 'text/plain', 'about-us.txt', m.a.apiKey);
    const posted = await m.ca.rest('POST', `/gofers/${m.ga}/chat/messages`, {
      attachmentIds: [attachment.id],
    });
    expect(posted.status, posted.text).toBe(202);
    // The RAG reactor reads the document back from the bucket (storage.get) and parses it.
    await waitFor(
      async () => {
        const page = await m.ca.rest<{ attachments?: { id: string; ragStatus?: string }[] }[]>(
          'GET',
          `/gofers/${m.ga}/chat/messages`,
        );
        return page.body.some((x) =>
          x.attachments?.some((a) => a.id === attachment.id && a.ragStatus === 'ready'),
        );
      },
      { timeoutMs: 30_000, what: 'the document parsed from S3' },
    );

    // Matching signs the counterpart's URL for the other side of the thread.
    const path = `/threads/${m.threadId}/counterpart-attachments/${attachment.id}/url`;
    const signed = await waitFor(
      async () => {
        const res = await m.cb.rest<{ url: string; expiresAt: number }>('GET', path);
        return res.status === 200 ? res : undefined;
      },
      { timeoutMs: 30_000, what: 'the counterpart attachment URL' },
    );
    expect(keyOf(signed.body.url)).toBe(`${m.ga}/${attachment.id}`);
    expect(signed.body.expiresAt).toBeGreaterThan(Date.now());
    await expectDownload(signed.body.url, bytes, 'text/plain', 'about-us.txt', m.b.apiKey);
    // The owner's own side is no counterpart: its own thread view of its file is 404.
    expect((await m.ca.rest('GET', path)).status).toBe(404);
  });
});
