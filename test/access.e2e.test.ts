import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extraKey, form, png, REPO_ROOT, TestFleet, waitFor, type JoinedAccount } from '@oan/testing';
import { RelayAgent } from './relayAgent.ts';
import { matchTwoAccounts, matchTwoAccountsSaying, WEDDING, type Match } from './support.ts';

/**
 * The access matrix: every route of docs/openapi.json × every credential variant × (for routes
 * with ids) the actor's own ids, another account's, random ones, checked against the reference's
 * auth kinds, per-group authorization rules, route summary, error catalogue and 403-vs-404
 * ownership table. The expectations are derived from the row's auth kind and ownership outcomes,
 * never listed per cell. The agent relay's HTTP lookups, outside the document, get their own case
 * at the end.
 */

let fleet: TestFleet;
let owner: Party;
let other: Party;
let tokens: Record<Credential, string | null>;
/** Every answer of the matrix: none may be a 5xx. */
const seen: { cell: string; status: number }[] = [];

// ---- The routes of the public surface -------------------------------------------------------------

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const DOC = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
/** `METHOD /path/{param}` relative to /api/v1, as the table keys them. */
const ROUTES = Object.entries(DOC.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((m) => METHODS.has(m))
    .map((m) => `${m.toUpperCase()} ${path.replace(/^\/api\/v1/, '')}`),
);

// ---- Credentials ----------------------------------------------------------------------------------

const CREDENTIALS = [
  'none',
  'garbage bearer',
  'unknown API key',
  'expired JWT',
  'realm gofers JWT',
  'realm-less JWT',
  'alg none JWT',
  'JWT signed with another key',
  'revoked API key',
  "another account's API key",
  "owner's API key",
  "owner's JWT",
] as const;
type Credential = (typeof CREDENTIALS)[number];

type Auth = 'none' | 'jwt-strict' | 'multi+realm' | 'multi-open';
type Verdict = { refused: 401 | 'realm' } | { actor: 'owner' | 'other' };

/** What the credential amounts to on a route of this auth kind. */
function judge(credential: Credential, auth: Exclude<Auth, 'none'>): Verdict {
  switch (credential) {
    case 'none':
    case 'garbage bearer':
    case 'unknown API key':
    case 'expired JWT':
    case 'alg none JWT':
    case 'JWT signed with another key':
    case 'revoked API key':
      return { refused: 401 };
    // No realm claim counts as `gofers`; multi-open takes JWTs of either realm.
    case 'realm gofers JWT':
    case 'realm-less JWT':
      return auth === 'multi-open' ? { actor: 'owner' } : { refused: 'realm' };
    case "another account's API key":
      return auth === 'jwt-strict' ? { refused: 401 } : { actor: 'other' };
    case "owner's API key":
      return auth === 'jwt-strict' ? { refused: 401 } : { actor: 'owner' };
    case "owner's JWT":
      return { actor: 'owner' };
  }
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const hs256 = (claims: JWTPayload, secret: string) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

/**
 * The forged JWTs each differ from a valid one (libs/auth/src/jwt.ts: HS256, `sub`, `realm`, `iat`,
 * `exp`) in exactly one respect; `valid` is the control that proves the rest of the forgery right.
 */
async function forgeJwts(secret: string, accountId: string) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: accountId, realm: 'oan', iat: now, exp: now + 3600 };
  const { realm: _realm, ...realmless } = claims;
  return {
    valid: await hs256(claims, secret),
    expired: await hs256({ ...claims, iat: now - 7200, exp: now - 3600 }, secret),
    realmGofers: await hs256({ ...claims, realm: 'gofers' }, secret),
    realmless: await hs256(realmless, secret),
    algNone: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
    otherKey: await hs256(claims, randomBytes(32).toString('hex')),
  };
}

// ---- The ids: each party's resources; `nobody`'s are random UUIDs ---------------------------------

interface Party {
  name: 'owner' | 'other' | 'nobody';
  /** The Gofer in `thread`, matched, with `conversation`. */
  gofer: string;
  /** A Gofer of its own outside any thread, for the chat and uploads. */
  scratch: string;
  thread: string;
  /** A match request this party received and accepted. */
  requestId: string;
  conversation: string;
  /** An attachment of the counterpart's Gofer in `thread`. */
  counterpartAttachment: string;
  /** An attachment sent in `conversation`. */
  conversationAttachment: string;
  /** A message the other participant sent in `conversation`. */
  peerMessage: string;
  /** A device key this party published (docs/sealed-messages.md). */
  deviceKey: string;
  /** Resources a destructive call may consume: one fresh per call. */
  mintKey(): Promise<{ key: string; id: string }>;
  freshGofer(): Promise<string>;
  freshMessage(): Promise<string>;
  /** At most 3 webhooks per account: a new one, the oldest deleted when full; one kept; none. */
  freshWebhook(): Promise<string>;
  someWebhook(): Promise<string>;
  clearWebhooks(): Promise<void>;
  /** A runtime that stays (`RUNTIME`), and a fresh one for a deletion. */
  runtime: string;
  freshRuntime(): Promise<string>;
}

const nobody: Party = {
  name: 'nobody',
  gofer: randomUUID(),
  scratch: randomUUID(),
  thread: randomUUID(),
  requestId: randomUUID(),
  conversation: randomUUID(),
  counterpartAttachment: randomUUID(),
  conversationAttachment: randomUUID(),
  peerMessage: randomUUID(),
  deviceKey: randomUUID(),
  mintKey: async () => ({ key: 'gofers_never_minted', id: randomUUID() }),
  freshGofer: async () => randomUUID(),
  freshMessage: async () => randomUUID(),
  freshWebhook: async () => randomUUID(),
  someWebhook: async () => randomUUID(),
  clearWebhooks: async () => undefined,
  runtime: randomUUID(),
  freshRuntime: async () => randomUUID(),
};

interface Call {
  path?: Record<string, string>;
  query?: string;
  json?: unknown;
  form?: { payload: Buffer; headers: Record<string, string> };
}
interface Answer {
  status: number;
  text: string;
}

async function send(method: string, template: string, call: Call, token: string | null): Promise<Answer> {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = call.path?.[name];
    if (value === undefined) throw new Error(`${template}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  let body: string | Buffer | undefined;
  if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  }
  if (call.form) {
    Object.assign(headers, call.form.headers);
    body = call.form.payload;
  }
  const res = await fetch(`${fleet.url}/api/v1${path}${call.query ?? ''}`, { method, headers, body });
  return { status: res.status, text: await res.text() };
}

/** A setup call that must succeed; returns its JSON body. */
async function must<T>(token: string, route: string, call: Call = {}): Promise<T> {
  const [method, template] = route.split(' ') as [string, string];
  const res = await send(method, template, call, token);
  if (res.status < 200 || res.status > 299) throw new Error(`${route}: ${res.status} ${res.text}`);
  return (res.text ? JSON.parse(res.text) : undefined) as T;
}

const photo = () => form('p.png', 'image/png', png(2, 2));
/** A fresh X25519 public key, as a client publishes it. */
const newKey = () => generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!;
const text = () => form('note.txt', 'text/plain', Buffer.from('access matrix\n'));

/** The party whose account is `m.b` (the recipient of `requestId`), its counterpart being `m.a`. */
async function partyOf(name: 'owner' | 'other', m: Match, requestId: string): Promise<Party> {
  const me: JoinedAccount = m.b;
  const keyIds = async () =>
    new Set((await must<{ id: string }[]>(me.jwt, 'GET /api-keys')).map((k) => k.id));
  const say = async (token: string, content: string) =>
    (
      await must<{ id: string }>(token, 'POST /conversations/{conversationId}/messages', {
        path: { conversationId: m.conversationId },
        json: { content },
      })
    ).id;
  const scratch = (await must<{ goferId: string }>(me.apiKey, 'POST /gofers', { json: {} })).goferId;
  const counterpart = await must<{ photo: { id: string } }>(m.a.apiKey, 'POST /gofers/{goferId}/photos', {
    path: { goferId: m.ga },
    form: photo(),
  });
  const upload = await must<{ attachment: { attachmentId: string } }>(
    me.apiKey,
    'POST /conversations/{conversationId}/attachments',
    { path: { conversationId: m.conversationId }, form: photo() },
  );
  await must(me.apiKey, 'POST /conversations/{conversationId}/messages', {
    path: { conversationId: m.conversationId },
    json: { attachmentIds: [upload.attachment.attachmentId] },
  });
  const deviceKey = randomUUID();
  await must(me.apiKey, 'PUT /keys/{keyId}', { path: { keyId: deviceKey }, json: { publicKey: newKey() } });
  return {
    name,
    gofer: m.gb,
    scratch,
    thread: m.threadId,
    requestId,
    conversation: m.conversationId,
    counterpartAttachment: counterpart.photo.id,
    conversationAttachment: upload.attachment.attachmentId,
    peerMessage: await say(m.a.apiKey, 'from the counterpart'),
    deviceKey,
    // Minted one at a time (the matrix builds its calls in sequence), so the new id is the difference.
    mintKey: async () => {
      const before = await keyIds();
      const key = await extraKey(fleet.url, me.jwt);
      const added = [...(await keyIds())].filter((id) => !before.has(id));
      if (added.length !== 1) throw new Error(`expected one new key, got ${added.length}`);
      return { key, id: added[0]! };
    },
    freshGofer: async () =>
      (await must<{ goferId: string }>(me.apiKey, 'POST /gofers', { json: {} })).goferId,
    freshMessage: () => say(me.apiKey, 'to be recalled or revised'),
    ...webhooksOf(me),
    ...(await runtimesOf(me)),
  };
}

/** The runtime every party keeps; configure and register write it again with these same settings. */
const RUNTIME = { name: 'access', policy: { types: ['gofer_question'] } };

async function runtimesOf(me: JoinedAccount) {
  const runtime = (await must<{ runtimeId: string }>(me.jwt, 'POST /runtimes', { json: RUNTIME })).runtimeId;
  const fresh = async () =>
    (await must<{ runtimeId: string; name: string }[]>(me.jwt, 'GET /runtimes'))
      .filter((r) => r.name.startsWith('fresh-'))
      .map((r) => r.runtimeId);
  let n = 0;
  return {
    runtime,
    // At most 8 per account: the oldest fresh one goes first when six are there, so the last six
    // built survive to be sent (the accepted credentials come last in CREDENTIALS).
    freshRuntime: async () => {
      const [oldest, ...rest] = await fresh();
      if (oldest !== undefined && rest.length >= 5) {
        await must(me.jwt, 'DELETE /runtimes/{runtimeId}', { path: { runtimeId: oldest } });
      }
      const json = { name: `fresh-${++n}`, policy: RUNTIME.policy };
      return (await must<{ runtimeId: string }>(me.jwt, 'POST /runtimes', { json })).runtimeId;
    },
  };
}

/** `.invalid` never resolves (RFC 6761): the fleet's delivery attempts fail at once, offline. */
const HOOK_URL = 'https://webhook.invalid/access';

function webhooksOf(me: JoinedAccount) {
  const ids = async () => (await must<{ id: string }[]>(me.jwt, 'GET /webhooks')).map((w) => w.id);
  const remove = (id: string) => must(me.jwt, 'DELETE /webhooks/{webhookId}', { path: { webhookId: id } });
  const create = async () =>
    (await must<{ id: string }>(me.jwt, 'POST /webhooks', { json: { url: HOOK_URL } })).id;
  return {
    freshWebhook: async () => {
      const [oldest, ...rest] = await ids();
      if (oldest !== undefined && rest.length >= 2) await remove(oldest);
      return create();
    },
    someWebhook: async () => (await ids())[0] ?? create(),
    clearWebhooks: async () => {
      for (const id of await ids()) await remove(id);
    },
  };
}

// ---- The expectations table -----------------------------------------------------------------------

interface Extra {
  name: string;
  /** A call on the owner's parent resource (so another actor gets the row's `foreign` outcome). */
  call: (own: Party, foreign: Party) => Call | Promise<Call>;
  /** Statuses for the owner. */
  mine: number[];
}

interface Row {
  auth: Auth;
  /** The request about `p`'s resources (path ids and, where ids travel in it, the body). */
  call?: (p: Party) => Call | Promise<Call>;
  /** Status on the actor's own resources (or, without ids, for any accepted credential); for `none` routes, the answer every credential gets. */
  mine: number;
  /** A documented text the `mine` error must contain. */
  mineText?: string;
  /** Ownership outcomes: another account's id, a random one. Absent: the route takes no ids. */
  foreign?: 403 | 404;
  unknown?: 403 | 404;
  /** Probe-safe: every foreign and unknown answer byte-identical. */
  identical?: boolean;
  /** The code of the foreign and unknown answers when not the protocol's FORBIDDEN / NOT_FOUND. */
  refusedCode?: string;
  extras?: Extra[];
  /**
   * Probe-safe in the second id: the extras (the owner's own first id with another account's or a
   * random second id) answer the owner byte-identically.
   */
  identicalExtras?: boolean;
}

const uuid = () => randomUUID();
const probeSafe = { foreign: 403, unknown: 403, identical: true } as const;
/** Runtimes answer an unknown and another account's id with one 404 (docs/runtimes.md). */
const probeSafe404 = { foreign: 404, unknown: 404, identical: true } as const;

const TABLE: Record<string, Row> = {
  // Auth endpoints: auth none; a header, if sent, is ignored — every credential gets the same answer.
  'POST /auth/oan/google': {
    auth: 'none',
    call: () => ({ json: { idToken: 'not-a-google-token' } }),
    mine: 400,
  }, // Google sign-in not configured: 400 VALIDATION_ERROR
  'POST /auth/oan/email/request-code': {
    auth: 'none',
    call: () => ({ json: { email: `acl-${uuid()}@example.com` } }),
    mine: 200,
  },
  'POST /auth/oan/email/verify': {
    auth: 'none',
    call: () => ({ json: { email: `acl-${uuid()}@example.com`, code: '000000' } }),
    mine: 401,
  },
  'POST /auth/oan/pairing-codes': { auth: 'jwt-strict', mine: 200 },
  'POST /auth/oan/pairing-codes/redeem': {
    auth: 'none',
    call: () => ({ json: { code: '0123456789abcdef' } }),
    mine: 401,
  },
  // API-key management
  'GET /api-keys': { auth: 'multi+realm', mine: 200 },
  'DELETE /api-keys/{apiKeyId}': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { apiKeyId: (await p.mintKey()).id } }),
    mine: 204,
    ...probeSafe,
  },
  // Events
  'GET /events': { auth: 'multi+realm', call: () => ({ query: '?since=0&limit=10' }), mine: 200 },
  'GET /events/cursor': { auth: 'multi+realm', mine: 200 },
  'GET /events/unresolved': { auth: 'multi+realm', mine: 200 },
  // The edge's own view of the account's limits, authenticated as the event routes are.
  'GET /limits': { auth: 'multi+realm', mine: 200 },
  // Gofers
  'POST /gofers': { auth: 'multi+realm', call: () => ({ json: {} }), mine: 201 },
  'GET /gofers': { auth: 'multi+realm', mine: 200 },
  'POST /gofers/{goferId}/chat/messages': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch }, json: { content: 'ping' } }),
    mine: 202,
    ...probeSafe,
  },
  'GET /gofers/{goferId}/chat/messages': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch } }),
    mine: 200,
    ...probeSafe,
  },
  'DELETE /gofers/{goferId}': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { goferId: await p.freshGofer() } }),
    mine: 200,
    foreign: 403,
    unknown: 404, // DELETE alone: unknown 404, foreign 403
  },
  'POST /gofers/{goferId}/attachments': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch }, form: text() }),
    mine: 201,
    ...probeSafe,
  },
  'POST /gofers/{goferId}/photos': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch }, form: photo() }),
    mine: 201,
    ...probeSafe,
  },
  // ADR 0023: publish on / take off the agent relay; owner-only like every Gofer route.
  'PUT /gofers/{goferId}/relay': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch } }),
    mine: 200,
    ...probeSafe,
  },
  'DELETE /gofers/{goferId}/relay': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch } }),
    mine: 200,
    ...probeSafe,
  },
  // ADR 0035: reachable as an A2A agent, or not; owner-only like every Gofer route.
  'PUT /gofers/{goferId}/a2a': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch } }),
    mine: 200,
    ...probeSafe,
  },
  'DELETE /gofers/{goferId}/a2a': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.scratch } }),
    mine: 200,
    ...probeSafe,
  },
  'GET /gofers/{goferId}/pairings': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.gofer } }),
    mine: 200,
    ...probeSafe,
  },
  'GET /gofers/{goferId}/pairings/{threadId}': {
    auth: 'multi+realm',
    call: (p) => ({ path: { goferId: p.gofer, threadId: p.thread } }),
    mine: 200,
    ...probeSafe, // unknown or foreign goferId → 403, as for the pairings list
    extras: [
      {
        name: 'own Gofer, random thread',
        call: (o) => ({ path: { goferId: o.gofer, threadId: uuid() } }),
        mine: [404],
      },
      {
        name: "own Gofer, another account's thread",
        call: (o, f) => ({ path: { goferId: o.gofer, threadId: f.thread } }),
        mine: [404],
      },
    ],
    // Whether another account's thread exists is not told by this route (§4.4 (19): one 404).
    identicalExtras: true,
  },
  // Threads: multi-open; unknown thread 404, foreign 403 (frozen, distinguishable: §6 leaves no
  // room for one answer here; thread ids are keyed by ID_SECRET instead, so an outsider cannot name
  // the thread of two Gofers to ask about it — docs/adr/0029).
  'GET /threads': { auth: 'multi-open', mine: 200 },
  'GET /threads/{id}': {
    auth: 'multi-open',
    call: (p) => ({ path: { id: p.thread } }),
    mine: 200,
    foreign: 403,
    unknown: 404,
  },
  'GET /threads/{id}/messages': {
    auth: 'multi-open',
    call: (p) => ({ path: { id: p.thread } }),
    mine: 200,
    foreign: 403,
    unknown: 404,
  },
  'POST /threads/{id}/pair/confirm': {
    auth: 'multi-open',
    call: (p) => ({ path: { id: p.thread }, json: { roleId: p.gofer, accepted: true } }),
    mine: 400, // the session ended long ago: the thread is not pending
    mineText: 'Thread is not waiting for confirmation',
    foreign: 403,
    unknown: 404,
  },
  'GET /threads/{threadId}/counterpart-attachments/{attachmentId}/url': {
    auth: 'multi-open',
    call: (p) => ({ path: { threadId: p.thread, attachmentId: p.counterpartAttachment } }),
    mine: 200,
    foreign: 403,
    unknown: 404, // an unknown thread, as elsewhere in the threads group
    extras: [
      {
        name: 'own thread, random attachment',
        call: (o) => ({ path: { threadId: o.thread, attachmentId: uuid() } }),
        mine: [404],
      },
      {
        name: "own thread, another thread's counterpart attachment",
        call: (o, f) => ({ path: { threadId: o.thread, attachmentId: f.counterpartAttachment } }),
        mine: [404],
      },
    ],
    // §4.5 (24): unknown, deleted and not the counterpart's are one final 404.
    identicalExtras: true,
  },
  // Match requests: the ids of a new request travel in the body; unknown and foreign are the same 404.
  'POST /match-requests': {
    auth: 'multi+realm',
    call: (p) => ({ json: { threadId: p.thread, roleId: p.gofer } }),
    mine: 201, // idempotent: the existing match
    foreign: 404,
    unknown: 404,
    identical: true,
  },
  'POST /match-requests/{requestId}/decision': {
    auth: 'multi+realm',
    call: (p) => ({ path: { requestId: p.requestId }, json: { accept: true } }),
    mine: 400, // already decided
    ...probeSafe,
  },
  // Conversations: a non-participant and an unknown conversation get one probe-safe 403.
  'GET /conversations/{conversationId}/messages': {
    auth: 'multi+realm',
    call: (p) => ({ path: { conversationId: p.conversation } }),
    mine: 200,
    ...probeSafe,
  },
  'POST /conversations/{conversationId}/messages': {
    auth: 'multi+realm',
    call: (p) => ({ path: { conversationId: p.conversation }, json: { content: 'ping' } }),
    mine: 201,
    ...probeSafe,
  },
  'POST /conversations/{conversationId}/attachments': {
    auth: 'multi+realm',
    call: (p) => ({ path: { conversationId: p.conversation }, form: photo() }),
    mine: 201,
    ...probeSafe,
  },
  'GET /conversations/{conversationId}/attachments/{attachmentId}/url': {
    auth: 'multi+realm',
    call: (p) => ({ path: { conversationId: p.conversation, attachmentId: p.conversationAttachment } }),
    mine: 200,
    ...probeSafe,
    extras: [
      {
        name: 'own conversation, random attachment',
        call: (o) => ({ path: { conversationId: o.conversation, attachmentId: uuid() } }),
        mine: [404],
      },
      {
        name: "own conversation, another conversation's attachment",
        call: (o, f) => ({
          path: { conversationId: o.conversation, attachmentId: f.conversationAttachment },
        }),
        mine: [404],
      },
    ],
  },
  // Extension (ADR 0018): webhooks. Built in sequence, so the last three minted survive to
  // be sent — the accepted credentials come last in CREDENTIALS.
  'POST /webhooks': {
    auth: 'multi+realm',
    call: async () => {
      await Promise.all([owner.clearWebhooks(), other.clearWebhooks()]);
      return { json: { url: HOOK_URL } };
    },
    mine: 201,
  },
  'GET /webhooks': { auth: 'multi+realm', mine: 200 },
  'DELETE /webhooks/{webhookId}': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { webhookId: await p.freshWebhook() } }),
    mine: 204,
    ...probeSafe,
  },
  'GET /webhooks/{webhookId}/deliveries': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { webhookId: await p.someWebhook() } }),
    mine: 200,
    ...probeSafe,
  },
  // Extension (ADR 0030): runtimes. Registering the kept runtime again is the idempotent 200; the
  // lease routes name a job no one has, so the owner gets the job's 404 and the others the runtime's.
  'POST /runtimes': { auth: 'multi+realm', call: () => ({ json: RUNTIME }), mine: 200 },
  'GET /runtimes': { auth: 'multi+realm', mine: 200 },
  // The account's jobs handed to its owner (ADR 0032): the caller's own list, nothing to probe.
  'GET /runtimes/waiting': { auth: 'multi+realm', mine: 200 },
  'GET /runtimes/{runtimeId}': {
    auth: 'multi+realm',
    call: (p) => ({ path: { runtimeId: p.runtime } }),
    mine: 200,
    ...probeSafe404,
  },
  'DELETE /runtimes/{runtimeId}': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { runtimeId: await p.freshRuntime() } }),
    mine: 204,
    ...probeSafe404,
  },
  // Calls are built before they are sent, so a version read then is stale by the second: every
  // configure here names a version the runtime never reaches (the CAS itself: runtimes.int.test.ts).
  'POST /runtimes/{runtimeId}/configure': {
    auth: 'multi+realm',
    call: (p) => ({ path: { runtimeId: p.runtime }, json: { version: 1_000_000, policy: RUNTIME.policy } }),
    mine: 409,
    mineText: 'read it again and retry',
    ...probeSafe404,
  },
  'POST /runtimes/{runtimeId}/claim': {
    auth: 'multi+realm',
    call: (p) => ({ path: { runtimeId: p.runtime }, json: { worker: 'access' } }),
    mine: 200,
    ...probeSafe404,
  },
  // The kept runtime has no endpoint, so its owner is told there is nothing to verify (ADR 0033).
  'POST /runtimes/{runtimeId}/verify': {
    auth: 'multi+realm',
    call: (p) => ({ path: { runtimeId: p.runtime } }),
    mine: 409,
    mineText: 'no endpoint to verify',
    ...probeSafe404,
  },
  'GET /runtimes/{runtimeId}/jobs': {
    auth: 'multi+realm',
    call: (p) => ({ path: { runtimeId: p.runtime } }),
    mine: 200,
    ...probeSafe404,
  },
  'POST /runtimes/{runtimeId}/jobs/{jobId}/heartbeat': {
    auth: 'multi+realm',
    call: (p) => ({
      path: { runtimeId: p.runtime, jobId: uuid() },
      json: { leaseOwner: 'access', version: 1 },
    }),
    mine: 404,
    mineText: 'Job not found',
    ...probeSafe404,
  },
  'POST /runtimes/{runtimeId}/jobs/{jobId}/finish': {
    auth: 'multi+realm',
    call: (p) => ({
      path: { runtimeId: p.runtime, jobId: uuid() },
      json: { leaseOwner: 'access', version: 1, outcome: 'released' },
    }),
    mine: 404,
    mineText: 'Job not found',
    ...probeSafe404,
  },
  // Extension (docs/sealed-messages.md): the key directory. A keyId is the caller's own name for its
  // key, so there is no other account's to probe: every accepted credential publishes one of its own.
  'PUT /keys/{keyId}': {
    auth: 'multi+realm',
    call: () => ({ path: { keyId: uuid() }, json: { publicKey: newKey() } }),
    mine: 201,
  },
  'GET /keys': { auth: 'multi+realm', mine: 200 },
  // Retiring is final and repeatable (204 again); a key the caller never published is one 404.
  'DELETE /keys/{keyId}': {
    auth: 'multi+realm',
    call: (p) => ({ path: { keyId: p.deviceKey } }),
    mine: 204,
    ...probeSafe404,
    refusedCode: 'KEY_NOT_FOUND',
  },
  'GET /conversations/{conversationId}/keys': {
    auth: 'multi+realm',
    call: (p) => ({ path: { conversationId: p.conversation } }),
    mine: 200,
    ...probeSafe,
  },
  // Extension (docs/sealed-messages.md, ADR 0037): the sender corrects or retracts its message.
  'POST /conversations/{conversationId}/messages/{messageId}/revise': {
    auth: 'multi+realm',
    call: async (p) => ({
      path: { conversationId: p.conversation, messageId: await p.freshMessage() },
      json: { action: 'correct', clientMessageId: uuid(), content: 'corrected' },
    }),
    mine: 200,
    ...probeSafe,
    extras: [
      {
        name: "own conversation, the counterpart's message",
        call: (o) => ({
          path: { conversationId: o.conversation, messageId: o.peerMessage },
          json: { action: 'correct', clientMessageId: uuid(), content: 'not mine' },
        }),
        mine: [403],
      },
      {
        name: 'own conversation, random message',
        call: (o) => ({
          path: { conversationId: o.conversation, messageId: uuid() },
          json: { action: 'retract', clientMessageId: uuid() },
        }),
        mine: [404],
      },
    ],
  },
  // Extension (docs/openapi.json, ADR 0013, 0037): the sender recalls its message (a retraction);
  // probe-safe like /conversations.
  'DELETE /conversations/{conversationId}/messages/{messageId}': {
    auth: 'multi+realm',
    call: async (p) => ({ path: { conversationId: p.conversation, messageId: await p.freshMessage() } }),
    mine: 204,
    ...probeSafe,
    extras: [
      {
        name: "own conversation, the counterpart's message",
        call: (o) => ({ path: { conversationId: o.conversation, messageId: o.peerMessage } }),
        mine: [403, 404],
      },
    ],
  },
};

// ---- The matrix -----------------------------------------------------------------------------------

type Relation = 'mine' | 'foreign' | 'unknown';
interface Variant {
  name: string;
  /** One of the row's extras (a second id in the path). */
  extra?: boolean;
  /** Whose resources the ids are. */
  parent: Party['name'];
  call: () => Call | Promise<Call>;
  mine?: number[];
}
type Expected =
  | { kind: 'unauthorized' | 'realm' }
  | { kind: 'mine'; statuses: number[]; text?: string }
  | { kind: 'refused'; status: 403 | 404; code?: string };

function variantsOf(row: Row): Variant[] {
  const call = (p: Party) => row.call?.(p) ?? {};
  // Without ids the actor acts on its own account whatever `parent` says (see relationOf).
  if (row.foreign === undefined) return [{ name: 'no id', parent: 'owner', call: () => call(owner) }];
  return [
    { name: 'own id', parent: 'owner', call: () => call(owner) },
    { name: "another account's id", parent: 'other', call: () => call(other) },
    { name: 'random id', parent: 'nobody', call: () => call(nobody) },
    ...(row.extras ?? []).map((e) => ({
      name: e.name,
      extra: true,
      parent: 'owner' as const,
      call: () => e.call(owner, other),
      mine: e.mine,
    })),
  ];
}

function relationOf(row: Row, variant: Variant, actor: 'owner' | 'other'): Relation {
  if (row.foreign === undefined) return 'mine';
  if (variant.parent === 'nobody') return 'unknown';
  return variant.parent === actor ? 'mine' : 'foreign';
}

function expectationOf(row: Row, auth: Exclude<Auth, 'none'>, variant: Variant, c: Credential) {
  const verdict = judge(c, auth);
  if ('refused' in verdict)
    return { expected: { kind: verdict.refused === 401 ? 'unauthorized' : 'realm' } as Expected };
  const relation = relationOf(row, variant, verdict.actor);
  const expected: Expected =
    relation === 'mine'
      ? {
          kind: 'mine',
          statuses: variant.mine ?? [row.mine],
          ...(row.mineText ? { text: row.mineText } : {}),
        }
      : {
          kind: 'refused',
          status: relation === 'foreign' ? row.foreign! : row.unknown!,
          ...(row.refusedCode ? { code: row.refusedCode } : {}),
        };
  return { expected, relation };
}

/** What is wrong with `a` given `e` (JSON `{error, code}` bodies, documented codes), or null. */
function problemWith(a: Answer, e: Expected): string | null {
  if (a.status >= 500) return 'a 5xx';
  let body: Record<string, unknown> | undefined;
  try {
    body = a.text === '' ? undefined : (JSON.parse(a.text) as Record<string, unknown>);
  } catch {
    return 'a body that is not JSON (§0.3)';
  }
  if (a.status === 204 && a.text !== '') return 'a 204 with a body (§0.3)';
  const error = typeof body?.error === 'string' ? body.error : undefined;
  const errorBody = error !== undefined && typeof body?.code === 'string' && Object.keys(body).length === 2;
  switch (e.kind) {
    case 'unauthorized':
      return a.status === 401 && errorBody && body?.code === 'UNAUTHORIZED' && error?.includes('Unauthorized')
        ? null
        : 'expected 401 {error: "…Unauthorized…", code: "UNAUTHORIZED"} (§0.2, §5.3; connectors stop retrying on that text)';
    case 'realm':
      return a.status === 403 && errorBody && error === 'errors.realmNotAllowed'
        ? null
        : 'expected 403 errors.realmNotAllowed (§0.2, §5.2)';
    case 'mine':
      if (!e.statuses.includes(a.status)) return `expected ${e.statuses.join(' or ')}`;
      return e.text === undefined || error?.includes(e.text)
        ? null
        : `expected an error containing "${e.text}"`;
    case 'refused': {
      const code = e.code ?? (e.status === 403 ? 'FORBIDDEN' : 'NOT_FOUND');
      return a.status === e.status && errorBody && body?.code === code
        ? null
        : `expected ${e.status} {error, code: "${code}"} (§6, §5.1)`;
    }
  }
}

async function inPool<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/** Runs one route's cells; returns every divergence, one line each. */
async function runRoute(route: string, row: Row): Promise<string[]> {
  const [method, template] = route.split(' ') as [string, string];
  const cells: { variant: Variant; credential: Credential; call: Call }[] = [];
  // Built in sequence: some calls mint a fresh resource (a key, a Gofer, a message) to consume.
  for (const variant of variantsOf(row))
    for (const credential of CREDENTIALS) cells.push({ variant, credential, call: await variant.call() });
  const answers = await inPool(
    cells.map((cell) => () => send(method, template, cell.call, tokens[cell.credential])),
    8,
  );
  const problems: string[] = [];
  const probes: string[] = [];
  const extraProbes: string[] = [];
  const baseline = answers[cells.findIndex((c) => c.credential === 'none')]!;
  cells.forEach(({ variant, credential }, i) => {
    const a = answers[i]!;
    const cell = `${credential} × ${variant.name}`;
    seen.push({ cell: `${route}: ${cell}`, status: a.status });
    let problem: string | null;
    if (row.auth === 'none') {
      // The header is ignored — the same answer as without one, which is the row's.
      problem =
        a.status >= 500
          ? 'a 5xx'
          : a.status !== row.mine
            ? `expected ${row.mine}`
            : a.text !== baseline.text
              ? `expected the body sent without a credential: ${baseline.text}`
              : null;
    } else {
      const { expected, relation } = expectationOf(row, row.auth, variant, credential);
      problem = problemWith(a, expected);
      if (row.identical && (relation === 'foreign' || relation === 'unknown'))
        probes.push(`${a.status} ${a.text}`);
      if (row.identicalExtras && variant.extra && relation === 'mine')
        extraProbes.push(`${a.status} ${a.text}`);
    }
    if (problem) problems.push(`${cell}: ${problem}; got ${a.status} ${a.text}`);
  });
  const distinct = [...new Set(probes)];
  if (distinct.length > 1)
    problems.push(`foreign and unknown ids answered differently (§6 identical): ${distinct.join(' | ')}`);
  const distinctExtras = [...new Set(extraProbes)];
  if (row.identicalExtras && extraProbes.length === 0) problems.push('no extra answered the owner');
  if (distinctExtras.length > 1)
    problems.push(`foreign and unknown second ids answered differently: ${distinctExtras.join(' | ')}`);
  return problems;
}

// ---- The fixture and the tests --------------------------------------------------------------------

let matches: Match[] = [];

beforeAll(async () => {
  fleet = await TestFleet.start();
  matches = await Promise.all([
    matchTwoAccounts(fleet, ['acl-team', 'acl-eng']),
    matchTwoAccountsSaying(fleet, ['acl-couple', 'acl-lens'], WEDDING),
  ]);
  const [m1, m2] = matches as [Match, Match & { requestId: string }];
  // The owner is m1.b, the recipient of a's match request (so a decision on it is its own to take).
  const request = m1.cb.delivered.find((e) => e.type === 'match_request' && e.goferId === m1.gb);
  [owner, other] = await Promise.all([
    partyOf('owner', m1, String(request!.payload.requestId)),
    partyOf('other', m2, m2.requestId),
  ]);
  const jwt = await forgeJwts(fleet.env.JWT_SECRET!, m1.b.userId);
  const control = await send('GET', '/api-keys', {}, jwt.valid);
  if (control.status !== 200) throw new Error(`the forged control JWT was refused: ${control.text}`);
  const revoked = await owner.mintKey();
  await must(m1.b.jwt, 'DELETE /api-keys/{apiKeyId}', { path: { apiKeyId: revoked.id } });
  tokens = {
    none: null,
    'garbage bearer': `garbage-${randomBytes(12).toString('hex')}`,
    'unknown API key': 'gofers_deadbeef',
    'expired JWT': jwt.expired,
    'realm gofers JWT': jwt.realmGofers,
    'realm-less JWT': jwt.realmless,
    'alg none JWT': jwt.algNone,
    'JWT signed with another key': jwt.otherKey,
    'revoked API key': revoked.key,
    "another account's API key": m2.b.apiKey,
    "owner's API key": m1.b.apiKey,
    "owner's JWT": m1.b.jwt,
  };
});
afterAll(async () => {
  for (const m of matches) {
    m.ca.close();
    m.cb.close();
  }
  await fleet?.stop();
});

describe('the access matrix', () => {
  it('has a row for every route of docs/openapi.json, and none for a route the document lacks', () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    expect(ROUTES.filter((r) => !TABLE[r])).toEqual([]);
    expect(Object.keys(TABLE).filter((r) => !ROUTES.includes(r))).toEqual([]);
  });

  it.each(ROUTES)('%s answers every credential and id as the reference says', async (route) => {
    const row = TABLE[route];
    if (!row) throw new Error(`no row for ${route} in the expectations table`);
    expect(await runRoute(route, row)).toEqual([]);
  });

  it('never answered with a 5xx', () => {
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => s.status >= 500)).toEqual([]);
  });
});

// ---- The agent relay's HTTP lookups (docs/agent-relay.md; not in docs/openapi.json) ----------------

/**
 * `GET /api/agents/{address}` and `/api/relay/agents/{address}` are the ConnectOnion clients' lookups:
 * open to anyone, credential or not. An address that was never announced, an agent gone offline, an
 * unpublished Gofer and a malformed address are one 404, byte for byte, so a lookup tells a stranger
 * only what the directory lists now. Each lookup spends one of the 100 a minute per client address
 * (all of these come from 127.0.0.1), so the cells are kept under that.
 */
describe('the agent relay’s HTTP lookups', () => {
  const PATHS = ['/api/agents', '/api/relay/agents'];
  const agents: RelayAgent[] = [];
  afterAll(() => agents.forEach((a) => a.stop()));
  const lookup = async (path: string, address: string, token: string | null) => {
    const res = await fetch(`${fleet.url}${path}/${encodeURIComponent(address)}`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    return `${res.status} ${res.headers.get('content-type')} ${await res.text()}`;
  };
  const hosted = async (summary: string) => {
    const a = new RelayAgent(fleet.url.replace('http://', 'ws://'), summary);
    agents.push(a);
    await a.start();
    return a;
  };
  /** The owner's Gofer, published and taken off again: its address answered once, then not. */
  const unpublishedGofer = async () => {
    const goferId = await owner.freshGofer();
    const put = await must<{ address: string }>(tokens["owner's JWT"]!, 'PUT /gofers/{goferId}/relay', {
      path: { goferId },
    });
    await must(tokens["owner's JWT"]!, 'DELETE /gofers/{goferId}/relay', { path: { goferId } });
    return put.address;
  };

  it('answers an online agent to every credential alike, and the 404 of an unknown, offline or malformed address byte for byte', async () => {
    const online = await hosted('access online agent');
    const gone = await hosted('access agent gone offline');
    gone.stop();
    await waitFor(async () => (await lookup(PATHS[0]!, gone.address, null)).startsWith('404'), {
      what: 'the agent gone offline to leave the directory',
      intervalMs: 1000,
    });
    const targets = {
      'an unknown address': `0x${randomBytes(32).toString('hex')}`,
      'an agent gone offline': gone.address,
      'an unpublished Gofer': await unpublishedGofer(),
      'a malformed address': '0x1234',
    };
    const answers: Record<string, string[]> = {};
    const record = (what: string, a: string) => (answers[what] ??= []).push(a);
    for (const path of PATHS) {
      for (const c of CREDENTIALS) record(`online ${path}`, await lookup(path, online.address, tokens[c]));
      // Every credential on the first two; the rest with none and the owner's (the per-minute limit).
      for (const [what, address] of Object.entries(targets)) {
        const creds =
          what === 'an unknown address' || what === 'an agent gone offline'
            ? CREDENTIALS
            : (['none', "owner's JWT"] as const);
        for (const c of creds) record('404', await lookup(path, address, tokens[c]));
      }
    }
    for (const path of PATHS) {
      const distinct = [...new Set(answers[`online ${path}`])];
      expect(distinct).toHaveLength(1);
      expect(distinct[0]).toMatch(/^200 application\/json/);
      expect(JSON.parse(distinct[0]!.slice(distinct[0]!.indexOf('{')))).toMatchObject({
        address: online.address,
        summary: 'access online agent',
        online: true,
      });
    }
    expect([...new Set(answers['404'])]).toEqual([
      '404 application/json; charset=utf-8 {"error":"Agent not found or offline","code":"NOT_FOUND"}',
    ]);
  });
});
