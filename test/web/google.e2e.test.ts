import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFleet } from '@oan/testing';
import { axeFindings, openTab, startBrowser, tokenOf, WEB_FLEET } from './browser.ts';

const CLIENT_ID = 'oan-web-test.apps.googleusercontent.com';
const EMAIL = 'google.operator@web.test';

/**
 * Google's side of OpenID Connect, the boundary we do not own: an authorization endpoint that signs
 * the operator straight in (no consent screen) and sends them back to the registered redirect URI
 * with an ID token in the fragment, signed by a test key whose JWKS auth reads, as Google's would be.
 */
class OidcStub {
  readonly server: Server;
  origin = '';
  /** The redirect URI registered for the client (Google refuses any other): the fleet's page. */
  redirectUri = '';
  /** Every authorization request, and every ID token issued. */
  readonly requests: URLSearchParams[] = [];
  readonly issued: string[] = [];
  /** Set to sign the next token with another nonce than the one asked for (a replayed token). */
  nonceOverride: string | null = null;
  private readonly key: CryptoKey;

  constructor(key: CryptoKey, jwk: object) {
    this.key = key;
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.origin);
      if (url.pathname === '/certs') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: [jwk] }));
        return;
      }
      if (url.pathname !== '/authorize') {
        res.writeHead(404).end();
        return;
      }
      const q = url.searchParams;
      this.requests.push(q);
      const nonce = q.get('nonce');
      const state = q.get('state');
      if (
        q.get('client_id') !== CLIENT_ID ||
        q.get('redirect_uri') !== this.redirectUri ||
        q.get('response_type') !== 'id_token' ||
        !(q.get('scope') ?? '').split(' ').includes('openid') ||
        !nonce ||
        !state
      ) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_request');
        return;
      }
      void this.idToken(this.nonceOverride ?? nonce).then((idToken) => {
        this.issued.push(idToken);
        const answer = new URLSearchParams({ state, id_token: idToken, authuser: '0', prompt: 'none' });
        res.writeHead(302, { location: `${this.redirectUri}#${answer.toString()}` }).end();
      });
    });
  }

  idToken(nonce: string): Promise<string> {
    return new SignJWT({ email: EMAIL, email_verified: true, nonce })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(this.origin)
      .setAudience(CLIENT_ID)
      .setSubject('google-sub-web-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(this.key);
  }

  static async start(): Promise<OidcStub> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const stub = new OidcStub(privateKey, jwk);
    await new Promise<void>((resolve) => stub.server.listen(0, '127.0.0.1', resolve));
    stub.origin = `http://127.0.0.1:${(stub.server.address() as AddressInfo).port}`;
    return stub;
  }
}

/** "Sign in with Google" on a fleet configured for it, the redirect there and back. */
describe('the web frontend, when the fleet is configured for Google sign-in', () => {
  let stub: OidcStub;
  let fleet: TestFleet;
  let browser: Browser;

  beforeAll(async () => {
    stub = await OidcStub.start();
    [fleet, browser] = await Promise.all([
      // The way auth's own tests configure it (services/auth/test/google.int.test.ts), for the whole fleet.
      TestFleet.start({
        only: WEB_FLEET,
        webAtPublicUrl: true,
        env: {
          GOOGLE_CLIENT_ID: CLIENT_ID,
          GOOGLE_JWKS_URL: `${stub.origin}/certs`,
          GOOGLE_ISSUER: stub.origin,
          GOOGLE_AUTHORIZATION_URL: `${stub.origin}/authorize`,
        },
      }),
      startBrowser(),
    ]);
    stub.redirectUri = `${fleet.url}/signin/google`;
  });
  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
    await new Promise((resolve) => stub?.server.close(resolve));
  });

  const tab = () => openTab(browser, fleet.url);

  it('offers "Sign in with Google" beside the email code, from the public config', async () => {
    expect(await (await fetch(`${fleet.url}/config.json`)).json()).toEqual({
      google: { clientId: CLIENT_ID, authorizationUrl: `${stub.origin}/authorize` },
    });
    const { page } = await tab();
    await page.goto('/');
    await page.getByRole('button', { name: 'Sign in with Google' }).waitFor();
    expect(await page.getByRole('button', { name: 'Send code' }).isVisible()).toBe(true);
    expect(await axeFindings(page)).toEqual([]);
  });

  it('signs in through the authorization endpoint and lands on the page it started from, the token gone from the URL', async () => {
    const t = await tab();
    const { page } = t;
    await page.goto('/connectors');
    await page.getByRole('button', { name: 'Sign in with Google' }).click();
    await page.getByRole('heading', { name: 'Connectors' }).waitFor();
    await page.getByText(EMAIL).waitFor();
    expect(page.url()).toBe(`${fleet.url}/connectors`);
    expect(await page.evaluate('location.hash')).toBe('');

    // The request Google got: our client, our page to come back to, an ID token, a nonce and a state.
    const asked = stub.requests.at(-1)!;
    expect(asked.get('client_id')).toBe(CLIENT_ID);
    expect(asked.get('redirect_uri')).toBe(`${fleet.url}/signin/google`);
    expect(asked.get('response_type')).toBe('id_token');
    expect(asked.get('scope')).toBe('openid email');
    expect(asked.get('nonce')).toMatch(/^[0-9a-f]{32}$/);
    expect(asked.get('state')).toMatch(/^[0-9a-f]{32}$/);
    expect(asked.get('nonce')).not.toBe(asked.get('state'));

    // The session is the email path's: the OAN JWT in sessionStorage, good for the API, kept on reload.
    const token = (await tokenOf(t))!;
    expect(token).toMatch(/^ey/);
    const keys = await fetch(`${fleet.url}/api/v1/api-keys`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(keys.status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await axeFindings(page)).toEqual([]);

    // Back does not reach a URL holding the ID token: its history entry was rewritten at once.
    await page.goBack();
    expect(page.url()).not.toContain('id_token');
    expect(page.url()).not.toContain('#');

    // Nothing but this origin and the authorization endpoint was asked for (no script from the internet).
    const hosts = new Set([new URL(fleet.url).host, new URL(stub.origin).host]);
    for (const url of t.urls) if (url !== 'about:blank') expect(hosts.has(new URL(url).host), url).toBe(true);
    // Neither the ID token nor the JWT reached a fleet log; the JWT no URL or console line.
    const idToken = stub.issued.at(-1)!;
    expect(fleet.lines.some((l) => l.includes(idToken))).toBe(false);
    expect(fleet.lines.some((l) => l.includes(token))).toBe(false);
    for (const url of t.urls) expect(url).not.toContain(token);
    for (const line of [...t.console, ...t.pageErrors]) expect(line).not.toContain(idToken);
    expect(t.pageErrors).toEqual([]);
  });

  it('refuses an answer this tab did not ask for: a forged state, or a token for another nonce', async () => {
    // A valid token pushed into a fresh tab (login CSRF): no sign-in of ours is pending there.
    const forged = await tab();
    const idToken = await stub.idToken('a-nonce-of-someone-else');
    await forged.page.goto(
      `/signin/google#${new URLSearchParams({ id_token: idToken, state: 'forged' }).toString()}`,
    );
    await forged.page.getByRole('alert').filter({ hasText: 'not started in this tab' }).waitFor();
    expect(await forged.page.evaluate('location.hash')).toBe('');
    expect(await tokenOf(forged)).toBeUndefined();

    // The right state, but an ID token minted for another request (a replayed one).
    const replayed = await tab();
    await replayed.page.goto('/');
    stub.nonceOverride = 'another-request';
    try {
      await replayed.page.getByRole('button', { name: 'Sign in with Google' }).click();
      await replayed.page.getByRole('alert').filter({ hasText: 'not for this sign-in' }).waitFor();
    } finally {
      stub.nonceOverride = null;
    }
    expect(await replayed.page.evaluate('location.hash')).toBe('');
    expect(await tokenOf(replayed)).toBeUndefined();
    expect(await replayed.page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    // Starting again works.
    await replayed.page.getByRole('button', { name: 'Sign in with Google' }).click();
    await replayed.page.getByRole('button', { name: 'Sign out' }).waitFor();
  });
});
