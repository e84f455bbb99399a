import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extraKey, png, postJson, TestFleet, waitFor } from '@oan/testing';
import { scanPostgres } from './fleetScan.ts';
import { matchTwoAccounts, type Match } from './support.ts';

/**
 * Secrets: the whole journey (join → Gofers → discovery, session, match → conversation
 * with a file, plus failed attempts with wrong credentials and codes) with every process at debug
 * level; then no JWT, API key, pairing code or email code may appear in any log line, in any event
 * of any store or topic projection, or in any error body.
 */
let fleet: TestFleet;
let m: Match;
const secrets = new Map<string, string>();
const errorBodies: string[] = [];

beforeAll(async () => {
  fleet = await TestFleet.start({ env: { LOG_LEVEL: 'debug' } });
  m = await matchTwoAccounts(fleet, ['secret-a', 'secret-b']);
}, 240_000);
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
});

/** Records a failed answer's body for the scan. */
async function expectRefused(res: Response | { status: number; text: string }, status: number) {
  const text = 'text' in res && typeof res.text === 'string' ? res.text : await (res as Response).text();
  expect(res.status).toBe(status);
  errorBodies.push(text);
}

describe('secrets never leave the credential path', () => {
  it(
    'runs the whole journey at debug level, with wrong credentials and codes along the way',
    { timeout: 120_000 },
    async () => {
      for (const [k, v] of [
        ['a api key', m.a.apiKey],
        ['b api key', m.b.apiKey],
        ['a jwt', m.a.jwt],
        ['b jwt', m.b.jwt],
        ['a pairing code', m.a.pairingCode],
        ['b pairing code', m.b.pairingCode],
        ['a email code', m.a.emailCode],
        ['b email code', m.b.emailCode],
      ] as const) {
        secrets.set(k, v);
      }
      // A second key through a fresh pairing code; then that key revoked and used.
      const issued = await postJson(fleet.url, '/auth/oan/pairing-codes', undefined, m.a.jwt);
      secrets.set('issued pairing code', String(issued.body.code));
      const second = await extraKey(fleet.url, m.a.jwt);
      secrets.set('second api key', second);
      const keys = await fetch(`${fleet.url}/api/v1/api-keys`, {
        headers: { authorization: `Bearer ${second}` },
      });
      const list = (await keys.json()) as { id: string; lastUsedAt: string | null }[];
      const newest = list.sort((x, y) => String(y.lastUsedAt).localeCompare(String(x.lastUsedAt)))[0]!;
      await fetch(`${fleet.url}/api/v1/api-keys/${newest.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${second}` },
      });

      // Wrong things, each answered with an error body that must not echo the secret.
      const wrongKey = `${m.a.apiKey.slice(0, -4)}zzzz`;
      secrets.set('near-miss api key', wrongKey);
      await expectRefused(
        await fetch(`${fleet.url}/api/v1/gofers`, { headers: { authorization: `Bearer ${wrongKey}` } }),
        401,
      );
      await expectRefused(
        await fetch(`${fleet.url}/api/v1/gofers`, { headers: { authorization: `Bearer ${second}` } }),
        401,
      );
      await expectRefused(
        await fetch(`${fleet.url}/api/v1/gofers`, { headers: { authorization: `Bearer ${m.a.jwt}x` } }),
        401,
      );
      await expectRefused(
        await postJson(fleet.url, '/auth/oan/pairing-codes/redeem', { code: m.a.pairingCode }),
        401,
      );
      await expectRefused(
        await postJson(fleet.url, '/auth/oan/email/verify', { email: m.a.email, code: m.a.emailCode }),
        401,
      );
      // An API key where only a JWT is accepted (minting a pairing code).
      await expectRefused(await postJson(fleet.url, '/auth/oan/pairing-codes', undefined, m.b.apiKey), 401);

      // The conversation, with a file and its signed URL.
      const form = new FormData();
      form.append('file', new Blob([png(3, 3)], { type: 'image/png' }), 'p.png');
      const up = await fetch(`${fleet.url}/api/v1/conversations/${m.conversationId}/attachments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.a.apiKey}` },
        body: form,
      });
      expect(up.status).toBe(201);
      const { attachment } = (await up.json()) as { attachment: { attachmentId: string } };
      const sent = await m.ca.rest('POST', `/conversations/${m.conversationId}/messages`, {
        content: 'hello from a',
        attachmentIds: [attachment.attachmentId],
      });
      expect(sent.status).toBe(201);
      await waitFor(() => m.cb.delivered.find((e) => e.type === 'relay_message'), { what: 'relay_message' });
      const url = await m.cb.rest<{ url: string }>(
        'GET',
        `/conversations/${m.conversationId}/attachments/${attachment.attachmentId}/url`,
      );
      expect((await fetch(url.body.url)).status).toBe(200);
    },
  );

  it('no secret appears in any log line of any process', () => {
    const logs = fleet.lines.join('\n');
    expect(fleet.lines.some((l) => l.includes('"level":20'))).toBe(true); // debug lines were written
    for (const [name, value] of secrets) {
      if (/^\d{6}$/.test(value)) {
        // A bare 6-digit run can occur inside timestamps or ids: look for it as a value.
        expect(new RegExp(`["=:' ]${value}["',} ]`).test(logs), `${name} in a log line`).toBe(false);
      } else {
        expect(logs.includes(value), `${name} in a log line`).toBe(false);
      }
    }
  });

  it('no secret appears in any stored event, envelope or read model, nor in any error body', async () => {
    // Six digits can be anything in a table; hashes only are kept (email.int).
    const looked = [...secrets].filter(([, value]) => !/^\d{6}$/.test(value));
    const scan = await scanPostgres(
      fleet.env.DATABASE_URL!,
      looked.map(([, value]) => value),
    );
    expect(scan.scanned).toBeGreaterThan(10);
    for (const [name, value] of looked) expect(scan.hits.get(value), `${name} in a table`).toEqual([]);
    const bodies = errorBodies.join('\n');
    expect(errorBodies.length).toBeGreaterThanOrEqual(6);
    for (const [name, value] of secrets)
      expect(bodies.includes(value), `${name} in an error body`).toBe(false);
  });
});
