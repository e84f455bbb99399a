/**
 * `npm run openapi`: starts the fleet, reads each service's generated OpenAPI document (zod schemas
 * of its routes, @fastify/swagger) from its own port and writes the merged public surface to
 * docs/openapi.json. test/openapi.e2e.test.ts fails when the committed file differs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergedOpenApi, REPO_ROOT, TestFleet } from '@oan/testing';

const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
try {
  const doc = await mergedOpenApi(fleet);
  writeFileSync(join(REPO_ROOT, 'docs/openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths`);
} finally {
  await fleet.stop();
}
