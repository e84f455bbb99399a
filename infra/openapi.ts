/**
 * `npm run openapi`: starts the fleet, reads each service's generated OpenAPI document (zod schemas
 * of its routes, @fastify/swagger) from its own port and writes the merged public surface to
 * docs/openapi.json. test/openapi.e2e.test.ts fails when the committed file differs. The web
 * frontend's API types follow it (web/src/api/openapi.d.ts; test/web/types.unit.test.ts checks them).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergedOpenApi, REPO_ROOT, TestFleet } from '@oan/testing';
import { writeApiTypes } from './web.ts';

const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
try {
  const doc = await mergedOpenApi(fleet);
  writeFileSync(join(REPO_ROOT, 'docs/openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths`);
  await writeApiTypes();
} finally {
  await fleet.stop();
}
