import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdf, png, REPO_ROOT, TestFleet, waitFor } from '@oan/testing';
import { RelayAgent } from './relayAgent.ts';
import { relayClient } from './relayClient.ts';
import { exchange, exchangeArb, relayDefect, type Known } from './relayFuzz.ts';
import { matchTwoAccounts, openStateProbe, type Match, type StateProbe } from './support.ts';

/**
 * Fuzzing: fast-check requests over every route of docs/openapi.json, against the fleet,
 * sent byte for byte over a socket (so framing, headers and invalid UTF-8 reach the edge as built).
 * For every answer: no 5xx; a non-2xx is `application/json` with exactly `{error, code}`, both strings
 * (the error body convention); a 2xx body is JSON, a 204 empty. A refused request changes no event store
 * (checked around each request) and no row of read.oan_event (checked around each batch).
 * The agent relay's doors are fuzzed too, at the end: hostile frames on its sockets (test/relayFuzz.ts)
 * and fuzzed HTTP lookups, with an honest agent and a published Gofer answering before and after.
 *
 * Deterministic: every property is seeded from FUZZ_SEED; a failure names the seed and fast-check's
 * shrunk counterexample. FUZZ_RUNS multiplies every numRuns (e.g. FUZZ_RUNS=20 for a long session).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_129);
const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
/** numRuns per property: refused batches are cheap; accepted requests cost a settle (≈ 0.3 s) each. */
const RUNS = {
  ...{ body: 30, query: 10, path: 15, headers: 12, accepting: 50, acceptingQuery: 10, multipart: 20 },
  // The relay counts 120 new sockets and 100 lookups a minute per client address (all of these are
  // 127.0.0.1), so its properties stay under both; a refusal past them is checked like any answer.
  relayFrames: 40,
  relayLookups: 15,
};
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

let fleet: TestFleet;
let m: Match;
let probe: StateProbe;
let requestId: string;
/** The settled state before any fuzzing. */
let initial: Record<string, string>;

beforeAll(async () => {
  fleet = await TestFleet.start();
  m = await matchTwoAccounts(fleet, ['fz-team', 'fz-eng']);
  const mr = m.cb.delivered.find((e) => e.type === 'match_request');
  requestId = String(mr?.payload.requestId);
  probe = await openStateProbe(fleet.env.DATABASE_URL!);
  initial = await settle();
});
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await probe?.close();
  await fleet?.stop();
});

// ---- The public surface, from the OpenAPI document -------------------------------------------------

interface Schema {
  type?: string;
  maxLength?: number;
  minLength?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface Route {
  key: string;
  method: string;
  path: string;
  params: string[];
  query: string[];
  multipart: boolean;
  fields: { name: string; schema: Schema; required: boolean }[];
}

const DOC = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const ROUTES: Route[] = Object.entries(DOC.paths)
  .filter(([path]) => path.startsWith('/api/v1/'))
  .flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => {
        const body = op.requestBody?.content['application/json']?.schema;
        return {
          key: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase(),
          path,
          params: [...path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]!),
          query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
          multipart: Boolean(op.requestBody?.content['multipart/form-data']),
          fields: Object.entries(body?.properties ?? {}).map(([name, schema]) => ({
            name,
            schema,
            required: body?.required?.includes(name) ?? false,
          })),
        };
      }),
  );

/** Routes a well-formed JSON request (owner's key, real ids) succeeds on, changing state. */
const ACCEPTING = new Set([
  'POST /api/v1/auth/oan/email/request-code',
  'POST /api/v1/gofers',
  'POST /api/v1/gofers/{goferId}/chat/messages',
  // Publishing the owner's Gofer on the relay takes no fields, so any object is accepted.
  'PUT /api/v1/gofers/{goferId}/relay',
  // Likewise putting it on A2A.
  'PUT /api/v1/gofers/{goferId}/a2a',
  'POST /api/v1/match-requests',
  'POST /api/v1/conversations/{conversationId}/messages',
  'POST /api/v1/webhooks',
]);
/** The auth endpoints take auth `none`, so an absurd Authorization header does not make them refuse. */
const isPublic = (r: Route) => r.path.startsWith('/api/v1/auth/oan/') && !r.path.endsWith('/pairing-codes');

/** An id no resource has (fixed, so a counterexample replays as printed). */
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
/** The real id for each path parameter; a DELETE's target is always unknown (nothing is destroyed). */
function realIds(r: Route): Record<string, string> {
  const ids: Record<string, string> = {
    goferId: m.ga,
    threadId: m.threadId,
    id: m.threadId,
    conversationId: m.conversationId,
    requestId,
  };
  return Object.fromEntries(
    r.params.map((p, i) => [
      p,
      r.method === 'DELETE' && i === r.params.length - 1 ? UNKNOWN_ID : (ids[p] ?? UNKNOWN_ID),
    ]),
  );
}

/** A body each route takes as well-formed; the fuzz breaks it or decorates it. */
function baseBody(r: Route): Obj | undefined {
  const bodies: Record<string, Record<string, J>> = {
    'POST /api/v1/auth/oan/email/request-code': { email: `fz-${fleet.id}@example.com` },
    'POST /api/v1/auth/oan/email/verify': { email: m.a.email, code: 'not-the-code', platform: 'dsh' },
    'POST /api/v1/auth/oan/google': { idToken: 'not-a-google-token' },
    'POST /api/v1/auth/oan/pairing-codes/redeem': { code: 'not-a-pairing-code' },
    'POST /api/v1/gofers': {},
    'POST /api/v1/gofers/{goferId}/chat/messages': { content: 'hello' },
    'POST /api/v1/match-requests': { threadId: m.threadId, roleId: m.ga },
    'POST /api/v1/match-requests/{requestId}/decision': { accept: true },
    'POST /api/v1/threads/{id}/pair/confirm': { roleId: m.ga, accepted: true },
    'POST /api/v1/conversations/{conversationId}/messages': { content: 'hello' },
    // Its messageId is unknown (realIds): every revision is refused, the message-free 404 or a 400.
    'POST /api/v1/conversations/{conversationId}/messages/{messageId}/revise': {
      action: 'correct',
      clientMessageId: 'fuzz-1',
      content: 'hello again',
    },
    // `.invalid` never resolves (RFC 6761): the fleet's delivery attempts fail at once, offline.
    'POST /api/v1/webhooks': { url: 'https://webhook.invalid/fuzz' },
  };
  const b = bodies[r.key];
  return b && new Obj(Object.entries(b));
}

// ---- JSON with literals JSON.stringify cannot write (1e400, 2^53 + 1, 10k levels) --------------------

class Raw {
  readonly text: string;
  readonly label;
  constructor(text: string, label = text.length > 60 ? `${text.slice(0, 24)}…(${text.length} chars)` : text) {
    this.text = text;
    this.label = label;
  }
  [fc.toStringMethod]() {
    return `raw(${this.label})`;
  }
}
/** An object as entries: `__proto__` and duplicate keys go out as written. */
class Obj {
  readonly entries: [string, J][];
  constructor(entries: [string, J][]) {
    this.entries = entries;
  }
  [fc.toStringMethod]() {
    return `{${this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${fc.stringify(v)}`).join(', ')}}`;
  }
}
type J = null | boolean | number | string | Raw | Obj | J[];

function jsonText(v: J): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Obj)
    return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return JSON.stringify(v) ?? 'null'; // NaN and ±Infinity are null in JSON
}
const typeOf = (v: J): string =>
  v instanceof Raw
    ? ({ '"': 'string', '[': 'array', '{': 'object', t: 'boolean', f: 'boolean', n: 'null' }[v.text[0]!] ??
      'number')
    : v instanceof Obj
      ? 'object'
      : Array.isArray(v)
        ? 'array'
        : v === null
          ? 'null'
          : typeof v;

const longString = (n: number, ch = 'x') => new Raw(JSON.stringify(ch.repeat(n)), `"${ch}"×${n}`);
const deep = (depth: number, kind: 'array' | 'object') =>
  kind === 'array'
    ? new Raw('['.repeat(depth) + ']'.repeat(depth), `[…${depth} levels…]`)
    : new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `{"a":…${depth} levels…}`);

// ---- Arbitraries -------------------------------------------------------------------------------------

/** Characters storage layers choke on (Postgres text and jsonb refuse NUL and lone surrogates). */
const HOSTILE = ['\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\udc00y', '\ud83d'];
const NASTY = [
  ...['', ' ', '\u202e', '\ufeff', '\uffff', 'NaN', 'Infinity', '-0', 'null', 'undefined', 'true'],
  ...[
    '[object Object]',
    '__proto__',
    '../../etc/passwd',
    "' or 1=1 --",
    '${7*7}',
    '%00',
    '\r\n',
    'é',
    '🦄',
    '𝕏',
  ],
];
const nastyString = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE), weight: 2 },
  { arbitrary: fc.constantFrom(...NASTY), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }), weight: 1 },
);
const BIG_NUMBERS = ['9007199254740993', '-9007199254740993', '1e400', '-1e400', '1e-400', '-0'];
const scalar: fc.Arbitrary<J> = fc.oneof(
  { arbitrary: fc.constantFrom<J>(null, true, false, 0, -1, 1.5), weight: 3 },
  { arbitrary: fc.double(), weight: 1 },
  {
    arbitrary: fc.constantFrom(...BIG_NUMBERS, '123456789012345678901234567890').map((t) => new Raw(t)),
    weight: 2,
  },
  { arbitrary: nastyString, weight: 4 },
  { arbitrary: fc.constantFrom(1_000_000, 1_100_000).map((n) => longString(n)), weight: 1 },
  {
    arbitrary: fc
      .constantFrom(1_000, 10_000)
      .chain((d) => fc.constantFrom(deep(d, 'array'), deep(d, 'object'))),
    weight: 1,
  },
);
const fieldName = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '',
    '\u0000',
    'content',
    'roleId',
    'x',
  ),
  fc.string({ unit: 'binary', maxLength: 10 }),
);
const anyValue: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.array(fc.tuple(fieldName, tie('v')), { maxLength: 3 }).map((e) => new Obj(e)),
  ),
})).v;

/** A value outside the field's declared schema (answered 400 VALIDATION_ERROR). */
function breaking(s: Schema): fc.Arbitrary<J> | undefined {
  const wrongType = s.type ? anyValue.filter((v) => typeOf(v) !== s.type) : undefined;
  const options: fc.Arbitrary<J>[] = wrongType ? [wrongType] : [];
  if (s.maxLength !== undefined)
    options.push(fc.integer({ min: s.maxLength + 1, max: 4 * s.maxLength }).map((n) => longString(n)));
  if (s.minLength) options.push(fc.constant(''));
  if (s.type === 'array' && s.items) {
    const bad = breaking(s.items);
    if (bad) options.push(fc.array(bad, { minLength: 1, maxLength: 3 }));
    if (s.maxItems !== undefined)
      options.push(fc.constant(Array.from({ length: s.maxItems + 1 }, () => 'x')));
  }
  return options.length > 0 ? fc.oneof(...options) : undefined;
}
/** A value of the field's type, chosen to hurt (unicode, NUL, surrogates, huge). */
function decorating(s: Schema): fc.Arbitrary<J> {
  if (s.type === 'string')
    return fc.oneof(
      { arbitrary: nastyString, weight: 6 },
      { arbitrary: fc.constantFrom(200_000, 1_000_000).map((n) => longString(n, 'é')), weight: 1 },
    );
  if (s.type === 'boolean') return fc.boolean();
  if (s.type === 'array' && s.items) return fc.array(decorating(s.items), { maxLength: 3 });
  return anyValue;
}

interface BodyPart {
  contentType?: string;
  body?: Buffer;
  /** Raw framing headers; a content-length or transfer-encoding among them replaces the computed length. */
  framing?: [string, string][];
}
const json = (v: J): BodyPart & { body: Buffer } => ({
  contentType: 'application/json',
  body: Buffer.from(jsonText(v)),
});

/** The route's body with fields kept, dropped, decorated or broken, and extra fields; `mustBreak` breaks one for sure. */
function objectBody(r: Route, mustBreak: boolean): fc.Arbitrary<BodyPart> | undefined {
  const base = new Map(baseBody(r)?.entries ?? []);
  const breakable = r.fields.filter((f) => breaking(f.schema));
  if (mustBreak && breakable.length === 0) return undefined;
  const action = (f: Route['fields'][number], forced: boolean): fc.Arbitrary<J | undefined> =>
    forced
      ? breaking(f.schema)!
      : fc.oneof(
          { arbitrary: fc.constant(base.get(f.name)), weight: 1 },
          { arbitrary: fc.constant(undefined), weight: 1 },
          { arbitrary: decorating(f.schema), weight: 3 },
          { arbitrary: breaking(f.schema) ?? fc.constant(base.get(f.name)), weight: 1 },
        );
  return fc
    .integer({ min: 0, max: Math.max(0, breakable.length - 1) })
    .chain((victim) =>
      fc.tuple(
        fc.tuple(...r.fields.map((f) => action(f, mustBreak && f === breakable[victim]))),
        fc.array(fc.tuple(fieldName, anyValue), { maxLength: 2 }),
      ),
    )
    .map(([values, extra]) => {
      const entries = r.fields.flatMap((f, i): [string, J][] =>
        values[i] === undefined ? [] : [[f.name, values[i]]],
      );
      return json(new Obj([...entries, ...extra]));
    });
}

/** JSON that is not an object at the top (answered 400). */
const notAnObject = fc
  .oneof(
    scalar.filter((v) => typeOf(v) !== 'object'),
    fc.array(anyValue, { maxLength: 3 }),
    fc.constant(deep(10_000, 'array')),
  )
  .map((v) => json(v));
const INVALID_JSON = [
  '{',
  '}',
  '{"a":}',
  "{'a':1}",
  '{a:1}',
  '/*c*/{}',
  '\ufeff{}',
  'NaN',
  'undefined',
  '{"a":1}}',
  '[1,]',
  '"\\x"',
];
/** Text that is not JSON at all, including invalid UTF-8 outside any string. */
const notJson = fc.oneof(
  fc.constantFrom(...INVALID_JSON).map((t) => ({ contentType: 'application/json', body: Buffer.from(t) })),
  fc.constantFrom('ff', 'c080', 'eda080', 'f4908080', '00').map((hex) => ({
    contentType: 'application/json',
    body: Buffer.concat([Buffer.from('{"a":1,'), Buffer.from(hex, 'hex'), Buffer.from('}')]),
  })),
);
/** Invalid UTF-8 inside a string value: decoded with replacement characters, so maybe accepted. */
const badBytesInString = (r: Route) =>
  fc.constantFrom('ff', 'c080', 'eda080', 'f4908080').map((hex) => {
    const field = r.fields.find((f) => f.schema.type === 'string')?.name ?? 'x';
    return {
      contentType: 'application/json',
      body: Buffer.concat([Buffer.from(`{"${field}":"a`), Buffer.from(hex, 'hex'), Buffer.from('b"}')]),
    };
  });
/** Over every service's body limit (16 KiB to 1 MiB): a 413. */
const tooLarge = fc.constant(json(longString(1024 * 1024 + 1)));
/** Media types no JSON parser accepts. */
const FOREIGN_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'application/octet-stream',
];
/** Media types a server may or may not take as JSON. */
const ODD_TYPES = [
  ...[
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
  ],
  ...[
    'application/jsonx',
    'application/json-patch+json',
    '*/*',
    '',
    ';',
    'multipart/form-data',
    'multipart/form-data; boundary=b',
  ],
];
const typed = (r: Route, types: string[]) =>
  fc.constantFrom(...types).map((contentType) => ({ ...json(baseBody(r) ?? new Obj([])), contentType }));
const noType = (r: Route) => fc.constant({ body: Buffer.from(jsonText(baseBody(r) ?? new Obj([]))) });
const empty = fc
  .constantFrom('', ' ', '\r\n')
  .map((t) => ({ contentType: 'application/json', body: Buffer.from(t) }));

/** Framing the HTTP parser must refuse before any route runs. */
const badFraming = (r: Route) =>
  fc
    .constantFrom<[string, string][]>(
      [['content-length', 'abc']],
      [['content-length', '-1']],
      [['content-length', '1e3']],
      [
        ['content-length', '2'],
        ['content-length', '3'],
      ],
      [
        ['content-length', '2'],
        ['transfer-encoding', 'chunked'],
      ],
      [['transfer-encoding', 'gzip']],
    )
    .map((framing) => ({ ...json(baseBody(r) ?? new Obj([])), framing }));
/** A declared length shorter than the body: the route sees a truncated (invalid) object. */
const shortLength = (r: Route) =>
  fc.constant(json(baseBody(r) ?? new Obj([['a', 1]]))).map((b) => ({
    ...b,
    framing: [['content-length', String(Math.floor(b.body.length / 2))]] as [string, string][],
  }));
/** Framing that is valid but unusual: whatever it says, the route sees the base body (or none). */
const oddFraming = (r: Route) =>
  fc
    .constantFrom<[string, string][]>(
      [['content-length', '0']],
      [['transfer-encoding', 'chunked']],
      [['expect', '100-continue']],
    )
    // With `content-length: 0` no body is sent: bytes after it would be read as a second request.
    .map((framing) =>
      framing[0]![1] === '0'
        ? { contentType: 'application/json', body: Buffer.alloc(0), framing }
        : { ...json(baseBody(r) ?? new Obj([])), framing },
    );

/** Routes whose body may be absent: a JSON `null` is no body there (`{}` by default). */
const BODY_OPTIONAL = new Set([
  'POST /api/v1/gofers',
  'PUT /api/v1/gofers/{goferId}/relay',
  'PUT /api/v1/gofers/{goferId}/a2a',
]);

/** Bodies every route must refuse, whatever its ids and credentials. */
function refusedBody(r: Route): fc.Arbitrary<BodyPart> {
  const broken = objectBody(r, true);
  const notObject = BODY_OPTIONAL.has(r.key)
    ? notAnObject.filter((b) => b.body.toString('utf8') !== 'null')
    : notAnObject;
  return fc.oneof(
    ...(broken ? [{ arbitrary: broken, weight: 4 }] : []),
    { arbitrary: notObject, weight: 2 },
    { arbitrary: notJson, weight: 2 },
    { arbitrary: typed(r, FOREIGN_TYPES), weight: 1 },
    { arbitrary: badFraming(r), weight: 1 },
    { arbitrary: shortLength(r), weight: 1 },
    { arbitrary: tooLarge, weight: 1 },
  );
}
/** Bodies a route may accept: decorated objects, invalid UTF-8 in strings, empty, oddly typed or framed. */
const acceptableBody = (r: Route): fc.Arbitrary<BodyPart> =>
  fc.oneof(
    { arbitrary: objectBody(r, false)!, weight: 6 },
    { arbitrary: badBytesInString(r), weight: 1 },
    { arbitrary: empty, weight: 1 },
    { arbitrary: typed(r, ODD_TYPES), weight: 1 },
    { arbitrary: noType(r), weight: 1 },
    { arbitrary: oddFraming(r), weight: 1 },
  );
/** Any body at all. */
const anyBody = (r: Route) => fc.oneof(refusedBody(r), acceptableBody(r));
const baseBodyPart = (r: Route): BodyPart => {
  const b = baseBody(r);
  return b ? json(b) : {};
};

/** Percent-encodes the UTF-8 bytes of `s` except unreserved characters (a lone surrogate becomes U+FFFD). */
const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
/** Already-encoded path or query text that decoders choke on. */
const ENCODED_JUNK = [
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '%2e%2e',
  '%5C',
  '%ED%A0%80',
  '%C0%AF',
  '%20',
  '+',
  '%2B',
];
const BAD_PERCENT = ['%', '%%', '%zz', '%E0%A4%A', '%FF'];

const pathSegment = fc.oneof(
  { arbitrary: fc.uuid().map(String), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(pct), weight: 3 },
  {
    arbitrary: fc.constantFrom('..', '.', ';', ';a=b', '*', ':', '@', '!', 'null', '0', '-1', '9'.repeat(40)),
    weight: 2,
  },
  { arbitrary: fc.constantFrom(...ENCODED_JUNK), weight: 2 },
  { arbitrary: fc.constantFrom(...BAD_PERCENT).map((t) => ({ t })), weight: 1 },
  { arbitrary: fc.integer({ min: 129, max: 12_000 }).map((n) => ({ long: n })), weight: 1 },
);
type Segment = string | { t: string } | { long: number };
const segmentText = (s: Segment) => (typeof s === 'string' ? s : 't' in s ? s.t : 'a'.repeat(s.long));

const QUERY_VALUES = [
  ...['-1', '0', '1', '50', '200', '201', '9007199254740993', '18446744073709551616', '9223372036854775807'],
  ...['9223372036854775808', '1e400', '1e3', '0x10', '1.5', '-0', '+1', '01', 'NaN', 'Infinity', '', ' 1'],
  ...[
    'yesterday',
    '2026-01-01',
    '2026-01-01T00:00:00Z',
    '0001-01-01',
    '9999-12-31T23:59:59.999+14:00',
    '2026-02-30',
  ],
  ...['photo', 'document'],
];
const queryString = (r: Route) => {
  const name = fc.oneof(
    fc.constantFrom(...r.query, 'since', 'limit', 'offset', 'kind', 'width', 'height'),
    fc.constantFrom('__proto__', 'constructor', 'a[b]', 'since[]', 'limit[0]', '', 'é').map(pct),
    fc.constantFrom(...ENCODED_JUNK, ...BAD_PERCENT),
  );
  const value = fc.oneof(
    { arbitrary: fc.constantFrom(...QUERY_VALUES).map(pct), weight: 4 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(pct), weight: 2 },
    { arbitrary: fc.constantFrom(...ENCODED_JUNK, ...BAD_PERCENT), weight: 2 },
    { arbitrary: fc.integer({ min: 100, max: 8_000 }).map((n) => '9'.repeat(n)), weight: 1 },
  );
  const pair = fc.tuple(name, fc.constantFrom('=', '', '=='), value, fc.integer({ min: 1, max: 3 }));
  return fc
    .tuple(fc.array(pair, { minLength: 1, maxLength: 4 }), fc.constantFrom('&', '&&', ';'))
    .map(
      ([pairs, sep]) =>
        '?' + pairs.flatMap(([n, eq, v, times]) => Array<string>(times).fill(`${n}${eq}${v}`)).join(sep),
    );
};

/** Authorization values no server may take for the owner's credential. */
const absurdAuth = (): fc.Arbitrary<string> => {
  const key = m.a.apiKey;
  const jwt = m.a.jwt;
  return fc
    .oneof(
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Bearer  ',
        'bearer',
        'Basic dXNlcjpwYXNz',
        'Bearer null',
        'Bearer undefined',
      ),
      fc.constantFrom(
        'Bearer gofers_',
        'Bearer a.b.c',
        'Bearer ....',
        'Bearer eyJhbGciOiJub25lIn0.eyJyZWFsbSI6Im9hbiJ9.',
      ),
      fc.integer({ min: 1_000, max: 20_000 }).map((n) => ({ long: n })),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((s) => `Bearer ${s}`),
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 30 }).map((s) => `Bearer ${s}`),
      fc
        .nat({ max: key.length - 1 })
        .map((i) => `Bearer ${key.slice(0, i)}${key[i] === 'A' ? 'B' : 'A'}${key.slice(i + 1)}`),
      fc.nat({ max: key.length - 1 }).map((i) => `Bearer ${key.slice(0, i)}`),
      fc
        .nat({ max: jwt.length - 1 })
        .map((i) => `Bearer ${jwt.slice(0, i)}${jwt[i] === 'A' ? 'B' : 'A'}${jwt.slice(i + 1)}`),
    )
    .map((v) => (typeof v === 'string' ? v.replace(/[\r\n]/g, '') : `Bearer ${'a'.repeat(v.long)}`));
};
/** Values that carry the owner's key in odd framing: a server may accept some. */
const equivocalAuth = (): fc.Arbitrary<string> => {
  const key = m.a.apiKey;
  return fc.constantFrom(
    `bearer ${key}`,
    `BEARER\t${key}\t`,
    `Bearer  ${key} `,
    key,
    `Token ${key}`,
    `Bearer ${key} ${key}`,
    `Bearer ${key},Bearer x`,
  );
};
const ODD_HEADERS: [string, string][] = [
  ['x-request-id', '../../x'],
  ['x-request-id', 'a'.repeat(65)],
  ['accept', 'text/html'],
  ['accept-encoding', 'gzip, br'],
  ['x-forwarded-for', 'not-an-ip, ::1, 999.1.1.1'],
  ['origin', 'null'],
  ['content-encoding', 'gzip'],
  ['x-http-method-override', 'DELETE'],
];
/** Who calls: the owner's key most of the time (so bodies get validated), sometimes nobody, sometimes garbage. */
const caller = (): fc.Arbitrary<[string, string][]> =>
  fc.oneof(
    { arbitrary: fc.constant<[string, string][]>([['authorization', `Bearer ${m.a.apiKey}`]]), weight: 6 },
    { arbitrary: fc.constant<[string, string][]>([]), weight: 1 },
    { arbitrary: absurdAuth().map((v): [string, string][] => [['authorization', v]]), weight: 1 },
  );
/** Absurd credentials, sometimes several, with odd headers beside. */
const headerSets = (equivocal: boolean): fc.Arbitrary<[string, string][]> => {
  const value = equivocal ? fc.oneof(absurdAuth(), equivocalAuth()) : absurdAuth();
  return fc
    .tuple(fc.array(value, { minLength: 0, maxLength: 3 }), fc.subarray(ODD_HEADERS, { maxLength: 2 }))
    .map(([auth, odd]) => [...auth.map((v): [string, string] => ['authorization', v]), ...odd]);
};

/** One part, named `file` or not, with a fuzzed file name, part type and content (the uploads). */
function multipartBody(): fc.Arbitrary<BodyPart> {
  const fileName = fc.oneof(
    fc.constantFrom(
      'a.png',
      'a.pdf',
      'a.txt',
      '../../etc/passwd',
      'a"b.txt',
      'a\\b',
      '',
      'é.txt',
      '\ud800.txt',
      'a\u0000.txt',
    ),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.integer({ min: 200, max: 5_000 }).map((n) => `${'n'.repeat(n)}.txt`),
  );
  const partType = fc.constantFrom(
    'image/png',
    'image/jpeg',
    'application/pdf',
    'text/plain',
    'text/csv',
    'application/x-msdownload',
    '',
    'garbage',
  );
  const content = fc.oneof(
    fc.constant(png(1, 1)),
    fc.constant(pdf()),
    fc.constant(Buffer.from('plain text\n')),
    fc.uint8Array({ maxLength: 512 }).map((u) => Buffer.from(u)),
  );
  return fc
    .tuple(fc.constantFrom('file', 'file', 'other', ''), fileName, partType, content)
    .map(([name, file, type, bytes]) => {
      const boundary = 'fuzzboundary';
      const head = `--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${file.replace(/[\r\n]/g, '')}"\r\ncontent-type: ${type}\r\n\r\n`;
      return {
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: Buffer.concat([Buffer.from(head, 'utf8'), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
      };
    });
}

// ---- Requests as bytes ----------------------------------------------------------------------------------

interface Case {
  route: Route;
  target: string;
  headers: [string, string][];
  part: BodyPart;
}
function showCase(c: Case): string {
  const short = (s: string) => (s.length > 200 ? `${s.slice(0, 120)}…(${s.length} chars)` : s);
  const headers = [...c.headers, ...(c.part.framing ?? [])].map(([k, v]) => `${k}: ${short(v)}`);
  const body = c.part.body ? short(c.part.body.toString('latin1')) : '(none)';
  return `${c.route.method} ${short(c.target)} [${headers.join(' | ')}] content-type=${c.part.contentType ?? '(none)'} body=${JSON.stringify(body)}`;
}
const asCase = (c: Case): Case => Object.assign(c, { [fc.toStringMethod]: () => showCase(c) });

function targetOf(r: Route, ids: Record<string, Segment>, query = ''): string {
  return r.path.replace(/\{(\w+)\}/g, (_, p: string) => segmentText(ids[p]!)) + query;
}
function requestBytes(c: Case, host: string): Buffer {
  const { body, contentType, framing } = c.part;
  const headers: [string, string][] = [['host', host], ['connection', 'close'], ...c.headers];
  if (contentType !== undefined) headers.push(['content-type', contentType]);
  const sized = framing?.some(([k]) => k === 'content-length' || k === 'transfer-encoding');
  if (framing) headers.push(...framing);
  if (body && !sized) headers.push(['content-length', String(body.length)]);
  const chunked = framing?.some(([k, v]) => k === 'transfer-encoding' && v === 'chunked');
  const payload =
    chunked && body
      ? Buffer.from(`${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`, 'latin1')
      : body;
  const head = `${c.route.method} ${c.target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), payload ?? Buffer.alloc(0)]);
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}
/** The first final answer in `buf`, or undefined while incomplete (1xx interim answers are skipped). */
function parseAnswer(buf: Buffer, closed: boolean): Answer | undefined {
  let start = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', start);
    if (end < 0) return undefined;
    const [statusLine, ...lines] = buf.subarray(start, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const rest = buf.subarray(end + 4);
    if (status >= 100 && status < 200) {
      start = end + 4;
      continue;
    }
    const answer = (body: Buffer) => ({ status, headers, text: body.toString('utf8') });
    if (status === 204 || status === 304) return answer(Buffer.alloc(0));
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const chunks: Buffer[] = [];
      for (let at = 0; ;) {
        const eol = rest.indexOf('\r\n', at);
        if (eol < 0) return undefined;
        const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
        if (size === 0) return answer(Buffer.concat(chunks));
        if (rest.length < eol + 2 + size + 2) return undefined;
        chunks.push(rest.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
    }
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      return rest.length >= n ? answer(rest.subarray(0, n)) : undefined;
    }
    return closed ? answer(rest) : undefined;
  }
}
/** One exchange on a fresh socket; the answer may come (and the server hang up) before the body is all sent. */
function send(c: Case, timeoutMs = 30_000): Promise<Answer> {
  const url = new URL(fleet.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let buf = Buffer.alloc(0);
    const finish = (err: Error | null, a?: Answer) => {
      clearTimeout(timer);
      socket.destroy();
      if (a) resolve(a);
      else reject(err ?? new Error('no answer'));
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const attempt = (closed: boolean, err?: Error) => {
      const a = parseAnswer(buf, closed);
      if (a) finish(null, a);
      else if (closed)
        finish(
          err ?? new Error(`connection closed after ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`),
        );
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      attempt(false);
    });
    socket.on('end', () => attempt(true));
    // A server may cut an oversize upload short; the reset can arrive before (and discard) its answer.
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EPIPE' || err.code === 'ECONNRESET'
        ? finish(null, parseAnswer(buf, true) ?? { status: 0, headers: {}, text: err.code })
        : attempt(true, err),
    );
    socket.write(requestBytes(c, url.host));
  });
}

// ---- The properties -------------------------------------------------------------------------------------

/** What is wrong with an answer, per the `{error, code}` body rule (undefined when nothing is). */
function defect(a: Answer): string | undefined {
  if (a.status >= 500) return `a ${a.status}`;
  if (a.status >= 200 && a.status < 300) {
    if (a.status === 204) return undefined; // no body by definition
    try {
      JSON.parse(a.text);
      return undefined;
    } catch {
      return 'a 2xx body that is not JSON';
    }
  }
  if (!/^application\/json\b/i.test(a.headers['content-type'] ?? ''))
    return `content-type ${a.headers['content-type']}`;
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'an error body that is not JSON';
  }
  const b = body as Record<string, unknown>;
  if (typeof b !== 'object' || b === null || Array.isArray(b)) return 'an error body that is not an object';
  if (Object.keys(b).sort().join() !== 'code,error') return `error body keys ${Object.keys(b).join()}`;
  if (typeof b.error !== 'string' || typeof b.code !== 'string') return 'error/code not strings';
  if (/\n\s+at |node_modules|\.ts:\d+/.test(b.error)) return 'a stack trace in error';
  return undefined;
}

// ---- Server defects this fuzz found and still open -------------------------------------------

/** Each service's body limit (services/<name>/src/app.ts), by the path prefix the edge routes on. */
const bodyLimitOf = (r: Route) =>
  /^\/api\/v1\/(gofers|conversations)\b/.test(r.path)
    ? 256 * 1024
    : /^\/api\/v1\/events\b/.test(r.path)
      ? 1024 * 1024
      : 16 * 1024;
/**
 * Each predicate recognises one defect class by request and answer, narrowly, so the fuzz still runs
 * over it and fails on anything else; the state checks apply to these answers as to any other. The
 * `it.fails` tests at the end pin each one's minimal counterexample: fixing a defect makes its test
 * fail until its line here goes.
 */
/** Empty: every defect the fuzz found is fixed (ADR 0014); add a line only with an open issue. */
const KNOWN: Record<string, (c: Case, a: Answer) => boolean> = {};
/** How often the fuzz met each known defect (printed at the end). */
const met = new Map<string, number>();
afterAll(() => {
  if (met.size > 0) console.info('known server defects met by the fuzz:', Object.fromEntries(met));
});

/** Owner messages the brain has not answered yet (it answers each once, reactors/brain.ts). */
const UNANSWERED = `select count(*) from gofers.events u
  where u.type = 'ChatMessageAdded' and u.data->>'role' = 'user'
    and not exists (select 1 from gofers.events r where r.type = 'ChatMessageAdded' and r.data->>'replyTo' = u.data->>'messageId')`;
/**
 * Text documents still `processing`: reactors/rag.ts appends each one's final status, `ready` or
 * `failed`, for every active Gofer's (the fuzz deletes none), so there is no silent path to wait out.
 */
const UNPARSED = `select count(*) from gofers.events a
  where a.type = 'AttachmentAdded' and a.data->>'ragStatus' = 'processing'
    and not exists (select 1 from gofers.events s
      where s.type = 'AttachmentRagStatusChanged' and s.data->>'attachmentId' = a.data->>'attachmentId')`;
/**
 * Waits until no background reactor owes an accepted request an event (each would append it while a
 * later request is measured): every document parsed, and the brain has answered every owner message
 * (or a second has passed without, its silent-failure path); and neither the event stores nor
 * read.oan_event move for three polls in a row.
 */
async function settle(): Promise<Record<string, string>> {
  let last = '';
  let same = 0;
  return waitFor(
    async () => {
      const now = await probe.all();
      same = JSON.stringify(now) === last ? same + 1 : 0;
      last = JSON.stringify(now);
      if (same < 2 || (await probe.scalar(UNPARSED)) !== '0') return false;
      return (same >= 10 || (await probe.scalar(UNANSWERED)) === '0') && now;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: 'the event stores and read.oan_event to settle' },
  );
}

let dirty = false;
/**
 * One batch: every answer well formed; a refused answer (or any GET) leaves the event stores as they
 * were; when the batch is refused throughout, read.oan_event too. `mayAccept` allows a non-GET 2xx,
 * after which the fleet is let settle before the next request is measured.
 */
async function fuzz(
  label: string,
  arb: fc.Arbitrary<Case>,
  numRuns: number,
  mayAccept = false,
): Promise<void> {
  const before = dirty ? await settle() : await probe.all();
  dirty = false;
  let accepted = 0;
  const seed = (SEED + [...label].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) | 0, 0)) | 0;
  const property = fc.asyncProperty(arb, async (c) => {
    if (dirty) await settle();
    dirty = false;
    const stores = await probe.stores();
    const a = await send(c);
    if (a.status === 0 && (c.part.body?.length ?? 0) <= bodyLimitOf(c.route))
      throw new Error(`the connection was reset (${a.text}) before an answer`);
    const problem = a.status === 0 ? undefined : defect(a);
    if (problem) {
      const known = Object.keys(KNOWN).find((k) => KNOWN[k]!(c, a));
      if (!known)
        throw new Error(`${problem}: ${a.status} ${a.headers['content-type']} ${a.text.slice(0, 300)}`);
      met.set(known, (met.get(known) ?? 0) + 1);
    }
    const ok = a.status >= 200 && a.status < 300;
    if (ok && c.route.method !== 'GET') {
      if (!mayAccept)
        throw new Error(`accepted a request built to be refused: ${a.status} ${a.text.slice(0, 300)}`);
      accepted++;
      dirty = true;
      return;
    }
    const after = await probe.stores();
    if (JSON.stringify(after) !== JSON.stringify(stores)) {
      throw new Error(
        `a ${a.status} changed the event stores: ${JSON.stringify(stores)} → ${JSON.stringify(after)}`,
      );
    }
  });
  try {
    await fc.assert(property, { seed, numRuns });
  } catch (err) {
    (err as Error).message =
      `[${label}: FUZZ_SEED=${SEED}, property seed ${seed}]\n${(err as Error).message}`;
    throw err;
  }
  if (accepted === 0) {
    const after = dirty ? await settle() : await probe.all();
    expect(after, `${label}: every request was refused, yet state changed`).toEqual(before);
  }
}

const caseOf = (
  r: Route,
  ids: Record<string, Segment>,
  query: string,
  headers: [string, string][],
  part: BodyPart,
) => asCase({ route: r, target: targetOf(r, ids, query), headers, part });

describe('fuzzed requests to every route of docs/openapi.json', () => {
  it('enumerates the whole public surface', () => {
    expect(ROUTES.length).toBe(56);
  });

  describe('built to be refused: every answer is a well-formed 4xx and nothing changes', () => {
    for (const r of ROUTES) {
      const accepting = ACCEPTING.has(r.key);
      describe(r.key, () => {
        it('with fuzzed JSON bodies, content types, framing and sizes', async () => {
          const body = accepting ? refusedBody(r) : anyBody(r);
          const arb = fc.tuple(caller(), body).map(([h, part]) => caseOf(r, realIds(r), '', h, part));
          await fuzz(`${r.key} body`, arb, runs(RUNS.body));
        });
        if (!accepting) {
          it('with fuzzed query strings', async () => {
            const arb = fc
              .tuple(caller(), queryString(r))
              .map(([h, q]) => caseOf(r, realIds(r), q, h, baseBodyPart(r)));
            await fuzz(`${r.key} query`, arb, runs(RUNS.query));
          });
        }
        if (r.params.length > 0) {
          it('with fuzzed path parameters', async () => {
            const ids = fc.tuple(...r.params.map(() => pathSegment));
            const arb = fc
              .tuple(caller(), ids)
              .map(([h, segs]) =>
                caseOf(r, Object.fromEntries(r.params.map((p, i) => [p, segs[i]!])), '', h, baseBodyPart(r)),
              );
            await fuzz(`${r.key} path`, arb, runs(RUNS.path));
          });
        }
        if (!(accepting && isPublic(r))) {
          it('with absurd Authorization values and odd headers', async () => {
            const arb = headerSets(!accepting).map((h) => caseOf(r, realIds(r), '', h, baseBodyPart(r)));
            await fuzz(`${r.key} headers`, arb, runs(RUNS.headers));
          });
        }
      });
    }

    it('left the event stores and read.oan_event as they were, once the fleet settled', async () => {
      expect(await settle()).toEqual(initial);
    });
  });

  describe('may be accepted: every answer is well formed, and a refused one changes nothing', () => {
    for (const r of ROUTES.filter((x) => ACCEPTING.has(x.key))) {
      describe(r.key, () => {
        it('with any fuzzed body', async () => {
          const arb = fc
            .tuple(caller(), acceptableBody(r))
            .map(([h, part]) => caseOf(r, realIds(r), '', h, part));
          await fuzz(`${r.key} any body`, arb, runs(RUNS.accepting), true);
        });
        it('with fuzzed query strings and equivocal credentials', async () => {
          const arb = fc
            .tuple(fc.oneof(caller(), headerSets(true)), queryString(r))
            .map(([h, q]) => caseOf(r, realIds(r), q, h, baseBodyPart(r)));
          await fuzz(`${r.key} query+headers`, arb, runs(RUNS.acceptingQuery), true);
        });
      });
    }
    for (const r of ROUTES.filter((x) => x.multipart)) {
      it(`${r.key} with fuzzed multipart uploads`, async () => {
        const arb = fc.tuple(caller(), multipartBody(), r.query.length ? queryString(r) : fc.constant(''));
        await fuzz(
          `${r.key} multipart`,
          arb.map(([h, part, q]) => caseOf(r, realIds(r), q, h, part)),
          runs(RUNS.multipart),
          true,
        );
      });
    }
  });

  describe('server defects this fuzz found, each pinned by its minimal counterexample', () => {
    const route = (key: string) => ROUTES.find((r) => r.key === key)!;
    const owner = (): [string, string][] => [['authorization', `Bearer ${m.a.apiKey}`]];
    const rawJson = (text: string): BodyPart => ({
      contentType: 'application/json',
      body: Buffer.from(text),
    });
    const expectWellFormed = async (c: Case) => {
      const a = await send(c);
      expect(defect(a), `${showCase(c)} → ${a.status} ${a.text}`).toBeUndefined();
    };

    it('POST /gofers {"locale":"\\ud800"}: a lone surrogate is a 400 with the error body', async () => {
      await expectWellFormed(
        caseOf(route('POST /api/v1/gofers'), {}, '', owner(), rawJson('{"locale":"\\ud800"}')),
      );
    });
    it('POST /gofers/{goferId}/chat/messages {"content":"\\udc00"}: a lone surrogate is a 400 with the error body', async () => {
      const r = route('POST /api/v1/gofers/{goferId}/chat/messages');
      await expectWellFormed(caseOf(r, realIds(r), '', owner(), rawJson('{"content":"\\udc00"}')));
    });
    it('POST /conversations/{conversationId}/messages {"content":"\\ud800"}: a lone surrogate is a 400 with the error body', async () => {
      const r = route('POST /api/v1/conversations/{conversationId}/messages');
      await expectWellFormed(caseOf(r, realIds(r), '', owner(), rawJson('{"content":"\\ud800"}')));
    });
    it('POST /conversations/{conversationId}/messages {"content":"\\u0000"}: a NUL is a 400 with the error body', async () => {
      const r = route('POST /api/v1/conversations/{conversationId}/messages');
      await expectWellFormed(caseOf(r, realIds(r), '', owner(), rawJson('{"content":"\\u0000"}')));
    });
    for (const r of ROUTES.filter((x) => x.multipart)) {
      it(`${r.key} with content-type multipart/form-data and no boundary is a 400 with the error body`, async () => {
        await expectWellFormed(
          caseOf(r, realIds(r), '', owner(), { contentType: 'multipart/form-data', body: Buffer.from('{}') }),
        );
      });
    }
    it('GET /gofers with Expect: 100-continue reaches the service', async () => {
      const r = route('GET /api/v1/gofers');
      await expectWellFormed(
        caseOf(r, {}, '', [...owner(), ['expect', '100-continue']], { body: Buffer.from('{}') }),
      );
    });
    it('a 4 MB body to POST /auth/oan/email/request-code is a 413, never a 503', async () => {
      const c = caseOf(
        route('POST /api/v1/auth/oan/email/request-code'),
        {},
        '',
        [],
        json(longString(4_000_000)),
      );
      const answers = [];
      for (let i = 0; i < 10; i++) answers.push(await send(c));
      expect(answers.filter((a) => a.status >= 500).map((a) => a.status)).toEqual([]);
    });
    it('GET /gofers/%/chat/messages (a malformed percent-encoding) answers the error body', async () => {
      const r = route('GET /api/v1/gofers/{goferId}/chat/messages');
      await expectWellFormed(caseOf(r, { goferId: { t: '%' } }, '', owner(), {}));
    });
    it('GET /threads/{id} with an id of 101 characters reaches the route (no 414)', async () => {
      await expectWellFormed(
        caseOf(route('GET /api/v1/threads/{id}'), { id: 'a'.repeat(101) }, '', owner(), {}),
      );
    });
    it('Content-Length: abc answers the error body', async () => {
      const framing: [string, string][] = [['content-length', 'abc']];
      await expectWellFormed(
        caseOf(route('POST /api/v1/gofers'), {}, '', owner(), { ...rawJson('{}'), framing }),
      );
    });
    it('a 16 KiB Authorization header answers 431 with the error body', async () => {
      const auth: [string, string][] = [['authorization', `Bearer ${'a'.repeat(16 * 1024)}`]];
      await expectWellFormed(caseOf(route('GET /api/v1/gofers'), {}, '', auth, {}));
    });
  });
});

// ---- The agent relay's doors and a published Gofer (docs/agent-relay.md) ---------------------------

/** The relay's HTTP lookups (not in docs/openapi.json: they are the ConnectOnion clients' paths). */
const LOOKUPS: Route[] = ['/api/agents/{address}', '/api/relay/agents/{address}'].map((path) => ({
  key: `GET ${path}`,
  method: 'GET',
  path,
  params: ['address'],
  query: [],
  multipart: false,
  fields: [],
}));

describe('fuzzed frames and lookups at the agent relay and a published Gofer', () => {
  let edgeWs: string;
  let honest: RelayAgent;
  let late: RelayAgent | undefined;
  let gofer: { goferId: string; address: string };
  let known: Known;
  const owner = (method: string, path: string) =>
    fetch(`${fleet.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${m.a.apiKey}`, 'content-type': 'application/json' },
      body: method === 'GET' ? undefined : '{}',
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
  /**
   * The relay's log as a stranger could move it: every event of the honest agent and the published
   * Gofer, and every announcement of an address that is not a published Gofer (those re-announce on
   * their own, when their owner's chat changes their profile).
   */
  const relayLog = () =>
    probe.scalar(`select count(*) from agents.events e
      where e.stream_id in ('agent-${honest.address}', 'agent-${gofer.address}')
         or (e.type = 'AgentAnnounced'
             and not exists (select 1 from gofers.relay_agents r where 'agent-' || r.address = e.stream_id))`);
  /**
   * An honest caller's turn. A failure says what the test's echo agents saw, to tell a CONNECT that
   * never reached its agent (no session there) from an answer lost on the way back.
   */
  const ask = (address: string, prompt: string) =>
    relayClient(address, edgeWs, async () =>
      [honest, late]
        .flatMap((a) =>
          a
            ? [`${a.summary}: ${a.connections} sockets, sessions ${a.turns.size}, errors ${a.errors.join()}`]
            : [],
        )
        .join('; '),
    ).input(prompt, { timeoutMs: 20_000 });

  beforeAll(async () => {
    edgeWs = fleet.url.replace('http://', 'ws://');
    honest = new RelayAgent(edgeWs, 'fuzz echo agent');
    await honest.start();
    const created = await owner('POST', '/gofers');
    expect(created.status).toBe(201);
    const published = await owner('PUT', `/gofers/${created.body.goferId}/relay`);
    expect(published.status).toBe(200);
    gofer = { goferId: created.body.goferId!, address: published.body.address! };
    known = { agent: honest.address, gofer: gofer.address };
    // Both answer before the fuzz, so an answer missing after it is the fuzz's doing.
    expect((await ask(honest.address, 'before')).text).toBe('echo: before (turn 1)');
    expect((await ask(gofer.address, 'before')).text).not.toBe('');
    await settle();
  }, 60_000);
  afterAll(() => {
    honest?.stop();
    late?.stop();
  });

  it('answers hostile frames on every socket door with ERROR or a documented close, and records nothing', async () => {
    const label = 'relay frames';
    const seed = (SEED + [...label].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) | 0, 0)) | 0;
    const property = fc.asyncProperty(exchangeArb(known), async (x) => {
      const [stores, log] = [await probe.stores(), await relayLog()];
      const o = await exchange(edgeWs, x);
      const problem = relayDefect(x, o);
      const seen = `upgrade ${o.upgrade}, closed ${o.closed}, answers ${JSON.stringify(o.answers.map((a) => a.slice(0, 160)))}`;
      if (problem) throw new Error(`${problem} (${seen})`);
      const [storesAfter, logAfter] = [await probe.stores(), await relayLog()];
      if (logAfter !== log) throw new Error(`the relay's log moved ${log} → ${logAfter} (${seen})`);
      if (JSON.stringify(storesAfter) !== JSON.stringify(stores))
        throw new Error(`the event stores moved: ${JSON.stringify(stores)} → ${JSON.stringify(storesAfter)}`);
    });
    try {
      await fc.assert(property, { seed, numRuns: runs(RUNS.relayFrames) });
    } catch (err) {
      (err as Error).message =
        `[${label}: FUZZ_SEED=${SEED}, property seed ${seed}]\n${(err as Error).message}`;
      throw err;
    }
  }, 180_000);

  for (const r of LOOKUPS) {
    it(`${r.key} with fuzzed addresses, query strings and headers answers 200, 404 or 429, well formed`, async () => {
      const address = fc.oneof(
        {
          arbitrary: fc.constantFrom<Segment>(known.agent, known.gofer, known.agent.toUpperCase()),
          weight: 1,
        },
        { arbitrary: pathSegment, weight: 4 },
      );
      const arb = fc
        .tuple(fc.oneof(caller(), headerSets(false)), address, fc.oneof(fc.constant(''), queryString(r)))
        .map(([h, a, q]) => caseOf(r, { address: a }, q, h, {}));
      await fuzz(`${r.key} lookup`, arb, runs(RUNS.relayLookups));
    });
  }

  it('is still up afterwards: the processes answer, the honest agent and the Gofer are still answered', async () => {
    for (const name of ['agents1', 'agents2', 'gofers', 'edge'] as const) {
      expect(fleet.running.get(name)?.child.exitCode, `${name} exited`).toBeNull();
    }
    for (const name of ['agents1', 'agents2', 'gofers'] as const) {
      const port = fleet.plan.processes.find((p) => p.name === name)!.port;
      expect((await fetch(`http://127.0.0.1:${port}/ready`)).status, `${name} /ready`).toBe(200);
    }
    expect((await fetch(`${fleet.url}/api/health`)).status).toBe(200);
    // No spoofed ANNOUNCE displaced them: the same sockets still answer.
    expect((await ask(honest.address, 'after')).text).toBe('echo: after (turn 1)');
    expect(honest.connections).toBe(1);
    expect((await ask(gofer.address, 'after')).text).not.toBe('');
    // An honest agent that comes now is announced, and its announcement is recorded once.
    late = new RelayAgent(edgeWs, 'fuzz late agent');
    await late.start();
    const recorded = await probe.scalar(
      `select count(*) from agents.events where stream_id = 'agent-${late.address}' and type = 'AgentAnnounced'`,
    );
    expect(recorded).toBe('1');
    expect((await ask(late.address, 'hello')).text).toBe('echo: hello (turn 1)');
  }, 90_000);
});
