import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { checkCredentials } from '@oan/auth';
import { BODY_LIMITS, clientKey, clientOf, type TrustedProxies } from '@oan/http';
import { AgentCard as AgentCardJson, A2A_VERSION_HEADER, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
} from '@a2a-js/sdk/server';
import type { CallerBrain } from '../brain/types.ts';
import type { GoferContext } from '../commands/context.ts';
import { plausibleGoferId } from '../commands/context.ts';
import { a2aAgentOf } from '../infra/a2aAgents.ts';
import { relayView } from '../infra/relayView.ts';
import type { RelayBudget } from '../relay/budget.ts';
import { agentCard } from './card.ts';
import { CallerUser, callerFrom } from './caller.ts';
import { GoferExecutor } from './executor.ts';
import type { A2AHub } from './hub.ts';
import { GoferTaskStore } from './taskStore.ts';

/** The largest JSON-RPC request a caller may send (a message is text; 64 KiB is plenty). */
export const A2A_BODY_LIMIT = BODY_LIMITS.a2a;

export interface A2ARouteDeps {
  ctx: GoferContext;
  brain: CallerBrain;
  budget: RelayBudget;
  logger: Pick<FastifyBaseLogger, 'warn'>;
  /** The fleet's public origin, without a trailing slash (the card's URLs). */
  origin: string;
  trusted: TrustedProxies;
  /** The process's task buses, canceled turns and push notifications (shared with the owner's answers). */
  hub: A2AHub;
  /** Fault injection for the crash tests (GOFER_A2A_QA_FAULT, refused in production). */
  exitAfterRecord?: boolean;
}

const NOT_FOUND = { error: 'Not Found', code: 'NOT_FOUND' } as const;
/** JSON-RPC's internal error: its message never reaches the caller. */
const INTERNAL = -32603;
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};
const rpcError = (id: unknown, code: number, message: string) => ({
  jsonrpc: '2.0',
  id: typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null,
  error: { code, message },
});

/**
 * ADR 0035: a published Gofer as an A2A agent, on the public origin with no credential. The card
 * and the JSON-RPC endpoint answer one plain 404 for unknown, deleted and unpublished Gofers alike.
 * The JSON-RPC requests go to the SDK's own request handler and transport handler, over our task
 * store (the log) and executor; the envelope is checked here first so a caller gets the standard
 * codes (-32700 unparsable, -32600 not a request), which the SDK folds into -32602.
 */
export const a2aRoutes: FastifyPluginAsync<A2ARouteDeps> = async (app, deps) => {
  const { ctx, hub } = deps;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: A2A_BODY_LIMIT }, (_req, body, done) =>
    done(null, body),
  );

  /** The Gofer as A2A callers see it now, or null (unknown, deleted, unpublished, banned: one answer). */
  async function published(goferId: string) {
    if (!plausibleGoferId(goferId)) return null;
    const em = ctx.orm.em.fork();
    const row = await a2aAgentOf(em, goferId);
    if (!row?.published) return null;
    // A banned owner's Gofers are gone for callers from the ban's own commit on.
    const { banned } = await checkCredentials(em, [row.accountId], [], 0);
    if (banned.has(row.accountId)) return null;
    const { state } = await relayView(em, ctx.store.schema, goferId);
    if (state.status !== 'active') return null;
    const { name, description, values, demands } = state;
    const card = agentCard(deps.origin, goferId, {
      name,
      description,
      values: [...values],
      demands: [...demands],
    });
    return { accountId: row.accountId, card };
  }

  app.get<{ Params: { goferId: string } }>(
    '/a2a/gofers/:goferId/.well-known/agent-card.json',
    async (req, reply) => {
      const gofer = await published(req.params.goferId);
      if (!gofer) return reply.code(404).send(NOT_FOUND);
      // Unpublishing takes effect at once: nothing may keep the card.
      return reply.header('cache-control', 'no-store').send(AgentCardJson.toJSON(gofer.card));
    },
  );

  /**
   * A JSON-RPC error answer. The SDK maps any error it does not know to -32603 with the error's own
   * message (a database's, say): that message is logged, and the caller reads only "Internal error".
   */
  const hidden = <R extends { error?: unknown }>(response: R): R => {
    const error = response.error as { code?: number; message?: string } | undefined;
    if (error?.code !== INTERNAL) return response;
    deps.logger.warn({ message: error.message }, 'an A2A request failed');
    return { ...response, error: { code: INTERNAL, message: 'Internal error' } };
  };
  const failure = (id: RpcRequest['id'], err: unknown) =>
    hidden({ jsonrpc: '2.0', id: id ?? null, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });

  const rpc = async (req: FastifyRequest<{ Params: { goferId: string } }>, reply: FastifyReply) => {
    const gofer = await published(req.params.goferId);
    if (!gofer) return reply.code(404).send(NOT_FOUND);
    const address = clientKey(
      clientOf(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], deps.trusted),
    );
    const who = callerFrom(req.headers.authorization, address);
    if ('refused' in who) return reply.code(401).send(rpcError(null, -32600, who.refused));
    let body: unknown;
    try {
      body = JSON.parse(typeof req.body === 'string' ? req.body : '');
    } catch {
      return reply.send(rpcError(null, -32700, 'Parse error'));
    }
    if (!isRequest(body)) {
      const id = body !== null && typeof body === 'object' ? (body as { id?: unknown }).id : null;
      return reply.send(rpcError(id, -32600, 'Invalid Request'));
    }
    const requestedVersion = header(req, A2A_VERSION_HEADER);
    const extensions = header(req, HTTP_EXTENSION_HEADER);
    const context = new ServerCallContext({
      user: new CallerUser(who.caller),
      ...(requestedVersion ? { requestedVersion } : {}),
      ...(extensions
        ? {
            requestedExtensions: extensions
              .split(',')
              .map((e) => e.trim())
              .filter(Boolean),
          }
        : {}),
    });
    const scope = { goferId: req.params.goferId, accountId: gofer.accountId };
    const store = new GoferTaskStore(ctx, scope);
    const executor = new GoferExecutor({ ...deps, canceled: hub.canceled, running: hub.running }, scope);
    const { push } = hub;
    const handler = new DefaultRequestHandler(
      gofer.card,
      store,
      executor,
      hub.buses,
      push.store,
      push.sender,
    );
    const transport = new JsonRpcTransportHandler(handler);
    let result;
    try {
      validateVersion(context.requestedVersion, gofer.card, 'JSONRPC');
      result = await transport.handle(body as unknown as Record<string, unknown>, context);
    } catch (err) {
      return reply.send(failure(body.id, err));
    }
    if (!isStream(result)) return reply.send(hidden(result));
    const iterator = result[Symbol.asyncIterator]();
    let first;
    try {
      first = await iterator.next();
    } catch (err) {
      return reply.send(failure(body.id, err));
    }
    reply.hijack();
    reply.raw.writeHead(200, SSE_HEADERS);
    try {
      for (let next = first; !next.done; next = await iterator.next())
        reply.raw.write(`data: ${JSON.stringify(next.value)}\n\n`);
    } catch (err) {
      reply.raw.write(`event: error\ndata: ${JSON.stringify(failure(body.id, err))}\n\n`);
    } finally {
      reply.raw.end();
    }
  };
  const opts = { bodyLimit: A2A_BODY_LIMIT };
  app.post('/a2a/gofers/:goferId', opts, rpc);
  app.post('/a2a/gofers/:goferId/', opts, rpc);
};

interface RpcRequest {
  jsonrpc: '2.0';
  method: string;
  id?: string | number | null;
  params?: unknown;
}

/** A JSON-RPC 2.0 request object (a batch is not one: A2A has none). */
function isRequest(body: unknown): body is RpcRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const r = body as Record<string, unknown>;
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || r.method === '') return false;
  if (
    'id' in r &&
    !(r.id === null || typeof r.id === 'string' || (typeof r.id === 'number' && Number.isInteger(r.id)))
  )
    return false;
  return true;
}

const isStream = (v: unknown): v is AsyncGenerator<unknown> =>
  v !== null && typeof v === 'object' && Symbol.asyncIterator in v;

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};
