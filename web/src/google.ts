import { decodeJwt } from 'jose';
import { api, need } from './api/client';
import { navigate } from './router';
import { saveSession } from './session';

/** The edge's `/config.json` (services/edge/src/web.ts): what the page must know before sign-in. */
export interface WebConfig {
  google: { clientId: string; authorizationUrl: string } | null;
}

/** Read once at start-up; without it (an old edge, a blip) the page offers the email code alone. */
export async function loadWebConfig(): Promise<WebConfig> {
  try {
    const res = await fetch('/config.json', { headers: { accept: 'application/json' } });
    const body = (await res.json()) as Partial<WebConfig>;
    const g = body.google;
    return res.ok && g && typeof g.clientId === 'string' && typeof g.authorizationUrl === 'string'
      ? { google: { clientId: g.clientId, authorizationUrl: g.authorizationUrl } }
      : { google: null };
  } catch {
    return { google: null };
  }
}

/** Where Google sends the operator back (a page path of ours; the edge answers it with the app). */
export const GOOGLE_RETURN_PATH = '/signin/google';
/** The sign-in this tab started: what Google must send back, and the page to land on. */
const PENDING = 'oan.google';

interface Pending {
  state: string;
  nonce: string;
  returnTo: string;
}

function random(): string {
  // getRandomValues, unlike randomUUID, exists on a plain-http origin too (a LAN address in compose).
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * OpenID Connect's implicit flow (response_type=id_token), a plain redirect: no script of Google's is
 * loaded, so the CSP stays as it is. `state` ties the answer to this tab (no one else's sign-in can be
 * pushed into it), `nonce` ties the ID token to this request (a captured token cannot be replayed here).
 */
export function startGoogleSignIn(google: NonNullable<WebConfig['google']>): void {
  const pending: Pending = {
    state: random(),
    nonce: random(),
    returnTo: location.pathname === GOOGLE_RETURN_PATH ? '/' : location.pathname,
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(google.authorizationUrl);
  url.search = new URLSearchParams({
    client_id: google.clientId,
    redirect_uri: `${location.origin}${GOOGLE_RETURN_PATH}`,
    response_type: 'id_token',
    scope: 'openid email',
    nonce: pending.nonce,
    state: pending.state,
    prompt: 'select_account',
  }).toString();
  location.assign(url.href);
}

let answer: URLSearchParams | null = null;

/**
 * Runs before anything renders: Google's answer (the ID token) arrives in the URL's fragment, which
 * is taken out of the address bar and of the history entry at once, before any request is made.
 */
export function takeGoogleAnswer(): void {
  if (location.pathname !== GOOGLE_RETURN_PATH || location.hash.length < 2) return;
  answer = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', GOOGLE_RETURN_PATH);
}

/** The answer taken at start-up, handed out once (null when there is none). */
export function googleAnswer(): URLSearchParams | null {
  const a = answer;
  answer = null;
  return a;
}

/** A path of this origin, or `/`. */
const ownPath = (p: unknown): string =>
  typeof p === 'string' && p.startsWith('/') && !p.startsWith('//') ? p : '/';

function takePending(): Pending | null {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  try {
    const p = raw ? (JSON.parse(raw) as Partial<Pending>) : null;
    return p && typeof p.state === 'string' && typeof p.nonce === 'string'
      ? { state: p.state, nonce: p.nonce, returnTo: ownPath(p.returnTo) }
      : null;
  } catch {
    return null;
  }
}

/**
 * The ID token for the OAN JWT (`POST /auth/oan/google`), kept like the email path keeps
 * it; then the page the operator started from. Throws with the text to show on anything amiss.
 */
export async function finishGoogleSignIn(a: URLSearchParams): Promise<void> {
  const pending = takePending();
  if (!pending || a.get('state') !== pending.state)
    throw new Error('This Google sign-in was not started in this tab. Start it again.');
  const refused = a.get('error');
  if (refused)
    throw new Error(
      refused === 'access_denied'
        ? 'Google sign-in was cancelled.'
        : `Google refused the sign-in (${refused}).`,
    );
  const idToken = a.get('id_token') ?? '';
  let nonce: unknown;
  try {
    nonce = decodeJwt(idToken).nonce;
  } catch {
    nonce = undefined;
  }
  if (nonce !== pending.nonce)
    throw new Error('Google sent back a token that is not for this sign-in. Start it again.');
  const res = need(
    // The server checks the nonce too: the token must be the one minted for this request.
    await api.POST('/api/v1/auth/oan/google', { body: { idToken, platform: 'other', nonce: pending.nonce } }),
    'Google sign-in',
  );
  navigate(pending.returnTo, { replace: true });
  saveSession({ token: res.token, userId: res.user.id, email: res.user.email ?? '' });
}
