import { extensionsOpenApi } from '@oan/protocol';
import type { TestFleet } from './testFleet.ts';

interface OpenApiDoc {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, Operation>>;
  components?: Record<string, Record<string, unknown>>;
}

interface Operation {
  parameters?: unknown[];
  responses?: Record<string, unknown>;
}

/**
 * What the edge adds: its own routes, Idempotency-Key on every POST, the rate limit's 429
 * and RateLimit headers on every operation (the edge's routes included).
 */
function applyEdgeExtensions(doc: OpenApiDoc): void {
  const ext = extensionsOpenApi;
  Object.assign(doc.paths, ext.paths);
  for (const [kind, entries] of Object.entries(ext.components)) {
    doc.components![kind] = { ...doc.components![kind], ...entries };
  }
  for (const item of Object.values(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'post') {
        op.parameters = [...(op.parameters ?? []), ...ext.everyPost.parameters];
        op.responses = { ...op.responses, ...ext.everyPost.responses };
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        const r = response as { headers?: Record<string, unknown> };
        r.headers = {
          ...r.headers,
          ...(method === 'post' ? ext.everyPost.successHeaders : {}),
          ...ext.everyOperation.successHeaders,
        };
      }
      op.responses = { ...op.responses, ...ext.everyOperation.responses };
    }
  }
}

/** Which processes own public routes (the edge forwards paths unchanged). */
const OWNERS = ['auth', 'gofers', 'matching', 'conversations', 'runtimes', 'gateway1'] as const;

/** The public REST surface: every owner's generated document, merged; only `/api/v1/*` is public. */
export async function mergedOpenApi(fleet: TestFleet): Promise<OpenApiDoc> {
  const merged: OpenApiDoc = {
    openapi: '3.0.3',
    info: {
      title: 'OAN server — protocol v1',
      version: '1',
      description:
        'Generated from the route schemas of each service (npm run openapi). The wire reference is ../shared/spec/OAN-REFERENCE.md; the Socket.IO namespace /oan is described in docs/architecture.md.',
    },
    paths: {},
    components: { schemas: {}, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
  for (const name of OWNERS) {
    const port = fleet.plan.processes.find((p) => p.name === name)!.port;
    const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as OpenApiDoc;
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path.startsWith('/api/v1/')) merged.paths[path] = item;
    }
    Object.assign(merged.components!.schemas!, doc.components?.schemas ?? {});
  }
  applyEdgeExtensions(merged);
  merged.paths = Object.fromEntries(Object.entries(merged.paths).sort(([a], [b]) => a.localeCompare(b)));
  return merged;
}
