import { connect, address as coAddress } from 'connectonion';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { banAccount } from './support.ts';

/**
 * A published Gofer's spend is bounded over all its callers (a caller address is a free Ed25519
 * key): per Gofer and per owner account per hour, counted in Redis; past it a caller gets the
 * relay's ERROR and nothing is spent (no brain call, no role-chat row). A banned owner's Gofers stop
 * answering at once and leave the relay. Small budgets here: 2 turns per caller a minute, 5 per
 * Gofer and 7 per owner an hour.
 */

let fleet: TestFleet;
let owner: TestConnector;
let edge: string;
let db: pg.Client;

const caller = (address: string) => connect(address, { relayUrl: edge, keys: coAddress.generate() });
const lookup = (address: string) => fetch(`${fleet.url}/api/agents/${address}`);
const relayRows = async (goferId: string) =>
  Number(
    (
      await db.query<{ n: string }>(
        `select count(*)::text as n from gofers.events
          where stream_id = $1 and type = 'ChatMessageAdded' and data->>'kind' = 'relay'`,
        [`gofer-${goferId}`],
      )
    ).rows[0]!.n,
  );

async function publishedGofer(connector: TestConnector): Promise<{ goferId: string; address: string }> {
  const goferId = (await connector.rest<{ goferId: string }>('POST', '/gofers', {})).body.goferId;
  const res = await connector.rest<{ address: string }>('PUT', `/gofers/${goferId}/relay`);
  expect(res.status).toBe(200);
  return { goferId, address: res.body.address };
}

/** Fresh caller keys, one INPUT each, until one is refused: the answers before it, and its error. */
async function flood(address: string, max: number): Promise<{ answered: number; refusal: string }> {
  for (let answered = 0; answered < max; answered++) {
    try {
      await caller(address).input(`flood ${answered}`, { timeoutMs: 20_000 });
    } catch (err) {
      return { answered, refusal: (err as Error).message };
    }
  }
  return { answered: max, refusal: '' };
}

beforeAll(async () => {
  fleet = await TestFleet.start({
    only: ['auth', 'gofers', 'outbox', 'projector', 'gateway1', 'gateway2', 'agents1', 'agents2', 'edge'],
    env: {
      GOFER_RELAY_INPUTS_PER_MINUTE: '2',
      GOFER_RELAY_TURNS_PER_HOUR: '5',
      GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR: '7',
    },
  });
  edge = fleet.url.replace('http://', 'ws://');
  const a = await joinAccount(fleet.url, fleet.mailbox, `budget-owner-${fleet.id}@example.com`, 'dsh');
  owner = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
  db = new pg.Client({ connectionString: fleet.env.DATABASE_URL });
  await db.connect();
}, 120_000);

afterAll(async () => {
  owner?.close();
  await db?.end();
  await fleet?.stop();
});

describe('when fresh caller keys flood a published Gofer', () => {
  it('answers an honest caller first, then refuses past the Gofer’s budget with ERROR and records nothing', async () => {
    const { goferId, address } = await publishedGofer(owner);
    const honest = caller(address);
    for (const n of [1, 2])
      expect((await honest.input(`honest ${n}`, { timeoutMs: 20_000 })).text).not.toBe('');
    // Both at once, so a failure shows why the flood stopped where it did.
    expect(await flood(address, 10)).toEqual({
      answered: 3,
      refusal: expect.stringMatching(/Rate limited: this agent is answering no more callers now/),
    });
    expect(await relayRows(goferId)).toBe(5);
    // More fresh keys change nothing: no row, no answer.
    expect((await flood(address, 3)).answered).toBe(0);
    expect(await relayRows(goferId)).toBe(5);

    // The owner's budget spans its Gofers: a second one gets the 2 turns left of the owner's 7.
    const second = await publishedGofer(owner);
    const next = await flood(second.address, 10);
    expect(next.answered).toBe(2);
    expect(next.refusal).toMatch(/Rate limited: this agent/);
    expect(await relayRows(second.goferId)).toBe(2);
  }, 180_000);
});

describe('when the owner of a published Gofer is banned', () => {
  it('refuses its callers at once and takes the Gofer off the relay', async () => {
    const b = await joinAccount(fleet.url, fleet.mailbox, `banned-owner-${fleet.id}@example.com`, 'dsh');
    const banned = new TestConnector({ baseUrl: fleet.url, token: b.apiKey });
    try {
      const { goferId, address } = await publishedGofer(banned);
      const open = caller(address);
      expect((await open.input('before', { timeoutMs: 20_000 })).text).not.toBe('');
      banAccount(fleet, b.userId);
      await expect(open.input('after', { timeoutMs: 20_000 })).rejects.toThrow(/Agent not found or offline/);
      expect(await relayRows(goferId)).toBe(1);
      await waitFor(async () => (await lookup(address)).status === 404, {
        what: 'the banned owner’s Gofer to leave the relay',
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      const unpublished = await db.query(
        `select 1 from gofers.events where stream_id = $1 and type = 'GoferRelayUnpublished'`,
        [`gofer-${goferId}`],
      );
      expect(unpublished.rowCount).toBe(1);
    } finally {
      banned.close();
    }
  }, 120_000);
});
