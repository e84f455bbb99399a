import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, REPO_ROOT, TestFleet } from '@oan/testing';

/** Every route of the public surface, as the OpenAPI document lists it (method, /api/v1 path). */
const DOC = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
const ROUTES = Object.entries(DOC.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
    .map((m) => [m.toUpperCase(), path] as const),
);

let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start({ enableOpenApi: false });
});
afterAll(async () => {
  await fleet?.stop();
});

describe('when ENABLE_OPEN_API is off', () => {
  it('every OAN route of docs/openapi.json is 404 with the error body', async () => {
    expect(ROUTES.length).toBeGreaterThan(30);
    for (const [method, path] of ROUTES) {
      const url = `${fleet.url}${path.replace(/\{[^}]+\}/g, 'x')}`;
      const res = await fetch(url, {
        method,
        headers: { authorization: 'Bearer oan_whatever', 'content-type': 'application/json' },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: JSON.stringify({ email: 'a@b.co' }) }),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json(), `${method} ${path}`).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('the /oan namespace answers "Invalid namespace"', async () => {
    await expect(openSocket(fleet.url, 'gofers_whatever')).rejects.toThrow('Invalid namespace');
  });

  it('the health probe still answers', async () => {
    expect((await fetch(`${fleet.url}/api/health`)).status).toBe(200);
  });
});
