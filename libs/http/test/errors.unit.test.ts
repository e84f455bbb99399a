import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHttpApp, loggableError, unauthorized } from '../src/index.ts';

describe('the error handler', () => {
  it('answers every failure with {error, code} and hides 5xx details behind a trace id', async () => {
    const app = await createHttpApp({ name: 't', logLevel: 'silent', metrics: false });
    app.post('/v', { schema: { body: z.object({ a: z.string() }) } }, async () => ({ ok: true }));
    app.get('/u', async () => {
      throw unauthorized();
    });
    app.get('/boom', async () => {
      throw new Error('secret internals');
    });
    const cases = [
      [await app.inject({ method: 'POST', url: '/v', payload: { a: 1 } }), 400, 'VALIDATION_ERROR'],
      [
        await app.inject({
          method: 'POST',
          url: '/v',
          payload: '{bad',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'REQUEST_ERROR',
      ],
      [
        await app.inject({
          method: 'POST',
          url: '/v',
          payload: 'x'.repeat(2 * 1024 * 1024),
          headers: { 'content-type': 'application/json' },
        }),
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [await app.inject({ method: 'GET', url: '/u' }), 401, 'UNAUTHORIZED'],
      [await app.inject({ method: 'GET', url: '/nope' }), 404, 'NOT_FOUND'],
      [await app.inject({ method: 'GET', url: '/boom' }), 500, 'INTERNAL_ERROR'],
    ] as const;
    for (const [res, status, code] of cases) {
      expect(res.statusCode).toBe(status);
      const body = res.json<{ error: unknown; code: unknown }>();
      expect(body.code).toBe(code);
      expect(typeof body.error).toBe('string');
      expect(res.body).not.toContain('secret internals');
      expect(res.body).not.toContain('at ');
    }
    await app.close();
  });

  it('accepts a JSON content type with an empty body as no body and collapses a leading //', async () => {
    const app = await createHttpApp({ name: 't', logLevel: 'silent', metrics: false });
    app.post('/api/v1/x', async (req) => ({ body: req.body ?? null }));
    const res = await app.inject({
      method: 'POST',
      url: '//api/v1/x',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: null });
    await app.close();
  });
});

describe('a dependency that is down', () => {
  it('answers 503 with the error body for Postgres shutdowns, refused connections and their causes', async () => {
    const app = await createHttpApp({ name: 't', logLevel: 'silent', metrics: false });
    const failures: Record<string, () => Error> = {
      pgShutdown: () =>
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      pgRefusing: () =>
        Object.assign(new Error('database "x" is not currently accepting connections'), { code: '55000' }),
      refused: () =>
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      wrapped: () => new Error('query failed', { cause: Object.assign(new Error('x'), { code: '08006' }) }),
      redis: () => new Error('Connection is closed.'),
      pgBroken: () =>
        new Error(
          "select 1 from t where id = 'x' - Client has encountered a connection error and is not queryable",
        ),
      // Seen when the fleet's database terminated sessions mid-transaction (test/faults).
      trxDied: () => new Error('Transaction query already complete, run with DEBUG=knex:tx for more info'),
    };
    for (const [name, make] of Object.entries(failures)) {
      app.get(`/${name}`, async () => {
        throw make();
      });
    }
    app.get('/aborted', async () => {
      throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    });
    app.get('/bug', async () => {
      throw Object.assign(new Error('syntax error'), { code: '42601' });
    });
    for (const name of Object.keys(failures)) {
      const res = await app.inject({ method: 'GET', url: `/${name}` });
      expect(res.statusCode, name).toBe(503);
      expect(res.json()).toEqual({ error: 'Service temporarily unavailable', code: 'SERVICE_UNAVAILABLE' });
    }
    expect((await app.inject({ method: 'GET', url: '/bug' })).statusCode).toBe(500);
    expect((await app.inject({ method: 'GET', url: '/aborted' })).json()).toEqual({
      error: 'Request aborted',
      code: 'REQUEST_ERROR',
    });
    await app.close();
  });
});

describe('loggableError', () => {
  it('keeps only the server message of a database error, never its SQL and parameters', () => {
    const err = Object.assign(
      new Error('select * from t where key_hash = \'abc123\' - relation "t" does not exist'),
      { code: '42P01' },
    );
    const out = loggableError(err);
    expect(JSON.stringify(out)).not.toContain('abc123');
    expect(out).toMatchObject({ sqlState: '42P01', message: 'relation "t" does not exist' });
  });

  it('strips the statement from a driver error without a SQLSTATE too, stack included', () => {
    const err = new Error(
      "select * from api_keys where key_hash = 'abc123' for update - Client has encountered a connection error and is not queryable",
    );
    const out = loggableError(err);
    expect(JSON.stringify(out)).not.toContain('abc123');
    expect(out).toEqual({
      type: 'Error',
      message: 'Client has encountered a connection error and is not queryable',
    });
  });
});
