import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { API_TYPES, generateApiTypes } from '../../infra/web.ts';
import type { Envelope } from '../../web/src/api/events.ts';

/** ADR 0020: the web frontend's API types are the OpenAPI document's and the protocol's. */
describe('the web frontend’s API types', () => {
  it('are what openapi-typescript generates from the committed docs/openapi.json', async () => {
    // Stale after a change of the document: `npm run openapi` (or `npx tsx infra/web.ts --types`).
    expect(readFileSync(API_TYPES, 'utf8')).toBe(await generateApiTypes());
  });

  it('read every envelope @oan/protocol writes, with the same fields', () => {
    expectTypeOf<OanEventEnvelope>().toExtend<Envelope>();
    expectTypeOf<keyof Envelope>().toEqualTypeOf<keyof OanEventEnvelope>();
  });
});
