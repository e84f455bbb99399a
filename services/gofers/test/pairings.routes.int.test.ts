import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body, expectError } from '@oan/testing';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

/**
 * The pairing list and one pairing's card, and their probe-safe 403: the pairing cards of one
 * Gofer, read from `read.pairing_cards` (seeded here with SQL, as the projector's matching
 * projection would write them).
 */
let fleet: GoferFleet;
beforeAll(async () => {
  fleet = await startGoferFleet();
});
afterAll(async () => fleet?.close());

type Headers = Record<string, string>;
const get = (url: string, headers: Headers) =>
  fleet.app.inject({ method: 'GET', url: `/api/v1${url}`, headers });

const CARD_KEYS = [
  'id',
  'threadId',
  'roleId',
  'roleName',
  'pairingStatus',
  'dynamicStatus',
  'pairedAt',
  'updatedAt',
  'cardTitle',
  'summaryPreview',
  'opponentRoleName',
  'opponentUserName',
  'opponentUserAvatarUrl',
  'opponentProfileTitle',
  'opponentProfileInfoText',
  'coverPhoto',
  'photoCount',
].sort();

type Card = Record<string, unknown>;

async function newGofer(h: Headers): Promise<string> {
  const res = await fleet.app.inject({ method: 'POST', url: '/api/v1/gofers', headers: h, payload: {} });
  expect(res.statusCode).toBe(201);
  return body<{ goferId: string }>(res).goferId;
}

interface Seed {
  goferId: string;
  accountId: string;
  pairedAt: string;
  threadId?: string;
  ready?: boolean;
  pairingStatus?: string;
}

/** One side's card; `ready` fills what SummaryCardRecorded sets, plus columns never exposed. */
async function seedCard(seed: Seed): Promise<string> {
  const threadId = seed.threadId ?? randomUUID();
  const ready = seed.ready ?? false;
  await sql(
    fleet.orm.em.fork(),
    `insert into read.pairing_cards (id, thread_id, gofer_id, account_id, role_name, pairing_status,
       dynamic_status, paired_at, updated_at, card_title, summary_preview, opponent_gofer_id,
       opponent_role_name, opponent_source_platform, opponent_user_name, cover_photo, photo_count,
       card_version, card_message_id, card_payload, card_generated_at)
     values (?, ?, ?, ?, 'My Gofer', ?, ?, ?, ?, ?, ?, ?, 'Their Gofer', 'dsh', ?, ?::jsonb, ?, ?, ?, ?::jsonb, ?)`,
    [
      `${threadId}:${seed.goferId}`,
      threadId,
      seed.goferId,
      seed.accountId,
      seed.pairingStatus ?? 'awaiting_confirmation',
      ready ? 'ready' : 'pending',
      seed.pairedAt,
      seed.pairedAt,
      // A pending row holding a stale title still shows null (no title or preview while pending).
      'A title',
      'A preview',
      randomUUID(),
      ready ? 'Ann' : null,
      ready
        ? JSON.stringify({ attachmentId: 'p1', messageId: 'm1', ownerRoleId: 'o', width: 4, height: 3 })
        : null,
      ready ? 2 : 0,
      ready ? 1 : null,
      ready ? 'msg-1' : null,
      ready ? JSON.stringify({ actionItems: ['secret'], documents: [] }) : null,
      ready ? seed.pairedAt : null,
    ],
  );
  return threadId;
}

describe('GET /gofers/:goferId/pairings', () => {
  it('lists the Gofer’s cards newest first, exactly the whitelisted keys, null title while pending', async () => {
    const { accountId, headers } = await fleet.account();
    const goferId = await newGofer(headers);
    const other = await newGofer(headers);
    const oldest = await seedCard({ goferId, accountId, pairedAt: '2024-01-01T00:00:00.000Z', ready: true });
    const newest = await seedCard({ goferId, accountId, pairedAt: '2024-03-01T00:00:00.000Z' });
    const middle = await seedCard({
      goferId,
      accountId,
      pairedAt: '2024-02-01T00:00:00.000Z',
      pairingStatus: 'active',
    });
    await seedCard({ goferId: other, accountId, pairedAt: '2024-04-01T00:00:00.000Z' });

    const res = await get(`/gofers/${goferId}/pairings`, headers);
    expect(res.statusCode).toBe(200);
    const b = body<{ items: Card[] }>(res);
    expect(Object.keys(b)).toEqual(['items']);
    expect(b.items.map((c) => c.threadId)).toEqual([newest, middle, oldest]);
    for (const c of b.items) expect(Object.keys(c).sort()).toEqual(CARD_KEYS);

    expect(b.items[0]).toEqual({
      id: `${newest}:${goferId}`,
      threadId: newest,
      roleId: goferId,
      roleName: 'My Gofer',
      pairingStatus: 'awaiting_confirmation',
      dynamicStatus: 'pending',
      pairedAt: '2024-03-01T00:00:00.000Z',
      updatedAt: '2024-03-01T00:00:00.000Z',
      cardTitle: null,
      summaryPreview: null,
      opponentRoleName: 'Their Gofer',
      opponentUserName: null,
      opponentUserAvatarUrl: null,
      opponentProfileTitle: null,
      opponentProfileInfoText: null,
      coverPhoto: null,
      photoCount: 0,
    });
    expect(b.items[1]).toMatchObject({ pairingStatus: 'active', dynamicStatus: 'pending', cardTitle: null });
    expect(b.items[2]).toMatchObject({
      dynamicStatus: 'ready',
      cardTitle: 'A title',
      summaryPreview: 'A preview',
      opponentUserName: 'Ann',
      coverPhoto: { attachmentId: 'p1', messageId: 'm1', ownerRoleId: 'o', width: 4, height: 3 },
      photoCount: 2,
    });
    expect(JSON.stringify(b)).not.toContain('secret');
    expect(JSON.stringify(b)).not.toContain(accountId);
  });

  it('answers `limit` 1–100 (default 50) and refuses anything else with 400 VALIDATION_ERROR', async () => {
    const { accountId, headers } = await fleet.account();
    const goferId = await newGofer(headers);
    const base = Date.parse('2024-01-01T00:00:00.000Z');
    for (let i = 0; i < 52; i++) {
      await seedCard({ goferId, accountId, pairedAt: new Date(base + i * 60_000).toISOString() });
    }
    const items = async (q: string) => {
      const res = await get(`/gofers/${goferId}/pairings${q}`, headers);
      expect(res.statusCode).toBe(200);
      return body<{ items: Card[] }>(res).items;
    };
    expect(await items('')).toHaveLength(50);
    expect(await items('?limit=1')).toHaveLength(1);
    expect((await items('?limit=1'))[0]!.pairedAt).toBe(new Date(base + 51 * 60_000).toISOString());
    expect(await items('?limit=100')).toHaveLength(52);
    for (const bad of ['0', '101', '-1', '1.5', 'abc', '']) {
      expectError(await get(`/gofers/${goferId}/pairings?limit=${bad}`, headers), 400, 'VALIDATION_ERROR');
    }
  });

  it('an empty list for a Gofer without cards', async () => {
    const { headers } = await fleet.account();
    const goferId = await newGofer(headers);
    const res = await get(`/gofers/${goferId}/pairings`, headers);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({ items: [] });
  });
});

describe('GET /gofers/:goferId/pairings/:threadId', () => {
  it('answers one card; a thread without this Gofer’s card is 404 NOT_FOUND', async () => {
    const { accountId, headers } = await fleet.account();
    const goferId = await newGofer(headers);
    const sibling = await newGofer(headers);
    const threadId = await seedCard({
      goferId,
      accountId,
      pairedAt: '2024-01-01T00:00:00.000Z',
      ready: true,
    });
    const siblings = await seedCard({ goferId: sibling, accountId, pairedAt: '2024-01-02T00:00:00.000Z' });

    const res = await get(`/gofers/${goferId}/pairings/${threadId}`, headers);
    expect(res.statusCode).toBe(200);
    const card = body<Card>(res);
    expect(Object.keys(card).sort()).toEqual(CARD_KEYS);
    expect(card).toMatchObject({
      id: `${threadId}:${goferId}`,
      threadId,
      roleId: goferId,
      cardTitle: 'A title',
    });

    // Not created yet, another Gofer's thread (even the caller's own other Gofer), malformed.
    for (const t of [randomUUID(), siblings, 'not a uuid', '%00']) {
      expectError(await get(`/gofers/${goferId}/pairings/${t}`, headers), 404, 'NOT_FOUND');
    }
    // A pending card: title and preview null.
    const pending = await get(`/gofers/${sibling}/pairings/${siblings}`, headers);
    expect(pending.statusCode).toBe(200);
    expect(body(pending)).toMatchObject({ dynamicStatus: 'pending', cardTitle: null, summaryPreview: null });
  });
});

describe('unknown, foreign and deleted Gofers (byte-identical 403)', () => {
  it('answers both routes with the chat routes’ one 403 body', async () => {
    const owner = await fleet.account();
    const stranger = await fleet.account();
    const goferId = await newGofer(owner.headers);
    const threadId = await seedCard({
      goferId,
      accountId: owner.accountId,
      pairedAt: '2024-01-01T00:00:00.000Z',
    });
    const deleted = await newGofer(owner.headers);
    const deletedThread = await seedCard({
      goferId: deleted,
      accountId: owner.accountId,
      pairedAt: '2024-01-01T00:00:00.000Z',
    });
    const del = await fleet.app.inject({
      method: 'DELETE',
      url: `/api/v1/gofers/${deleted}`,
      headers: owner.headers,
    });
    expect(del.statusCode).toBe(200);

    const reference = await get(`/gofers/${randomUUID()}/chat/messages`, owner.headers);
    expectError(reference, 403, 'FORBIDDEN');
    const refusals = [
      await get(`/gofers/${goferId}/pairings`, stranger.headers),
      await get(`/gofers/${goferId}/pairings/${threadId}`, stranger.headers),
      await get(`/gofers/${goferId}/pairings/${randomUUID()}`, stranger.headers),
      await get(`/gofers/${randomUUID()}/pairings`, owner.headers),
      await get(`/gofers/${randomUUID()}/pairings/${threadId}`, owner.headers),
      await get(`/gofers/not-a-real-id/pairings`, owner.headers),
      await get(`/gofers/${deleted}/pairings`, owner.headers),
      await get(`/gofers/${deleted}/pairings/${deletedThread}`, owner.headers),
    ];
    for (const r of refusals) {
      expect(r.statusCode).toBe(403);
      expect(r.body).toBe(reference.body);
    }
  });

  it('needs credentials (401)', async () => {
    const { headers } = await fleet.account();
    const goferId = await newGofer(headers);
    expect((await get(`/gofers/${goferId}/pairings`, {})).statusCode).toBe(401);
    expect((await get(`/gofers/${goferId}/pairings/${randomUUID()}`, {})).statusCode).toBe(401);
  });
});
