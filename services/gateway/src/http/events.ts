import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from '@oan/http';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import { awaitOwnWrites, fetchEvents, maxSeq, WRITE_SOURCES, type WriteTracker } from '@oan/projection';
import { eventsQuery, PG_BIGINT_MAX } from './schemas';
import { unresolvedDigest, type OpenItemsProvider } from './openItems';

export interface EventRoutesDeps {
  orm: MikroORM;
  authenticator: Authenticator;
  openItems: readonly OpenItemsProvider[];
  /** The commands' recorded positions (invariant 4): each route first waits for the caller's own writes. */
  writes: WriteTracker;
  /** The bound of that wait (default 5 s), after which the route answers from what is there. */
  ownWritesTimeoutMs?: number;
}

/** Stored envelope texts joined verbatim, so every item is byte-identical to what was pushed (§4.3, §9.5). */
const jsonArrayOf = (texts: readonly string[]): string => `[${texts.join(',')}]`;

const accountOf = (req: FastifyRequest): string => principalOf(req).accountId;

/** §4.3: the event endpoints, registered under /api/v1 only when the gate is open (§0.5). */
export function eventRoutes(deps: EventRoutesDeps) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    // §3 / A5: the realm gate covers /events, /events/cursor and /events/unresolved.
    const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', allowBanned: true });
    // Invariant 4 (ADR 0009): after the caller's own command returned, its effects are in what these
    // routes read — the read models the digest joins (a decided request, an answered question
    // drops out) and the envelopes stage 1 produced for the caller from them (read.oan_expected).
    // Only a caller with writes the projector has not applied yet waits, bounded.
    const ownWrites = (req: FastifyRequest) =>
      awaitOwnWrites(deps.orm, deps.writes, accountOf(req), WRITE_SOURCES, {
        envelopes: true,
        ...(deps.ownWritesTimeoutMs === undefined ? {} : { timeoutMs: deps.ownWritesTimeoutMs }),
      });

    r.get('/events', { onRequest: auth, schema: { querystring: eventsQuery } }, async (req, reply) => {
      const { since, limit } = req.query;
      await ownWrites(req);
      // Past the largest bigint nothing can match; answering here keeps Postgres from a range error.
      const rows =
        since >= PG_BIGINT_MAX ? [] : await fetchEvents(deps.orm.em.fork(), accountOf(req), since, limit);
      return reply.type('application/json; charset=utf-8').send(jsonArrayOf(rows.map((row) => row.envelope)));
    });

    r.get('/events/cursor', { onRequest: auth }, async (req) => {
      await ownWrites(req);
      const seq = await maxSeq(deps.orm.em.fork(), accountOf(req));
      return { seq: seq.toString() };
    });

    r.get('/events/unresolved', { onRequest: auth }, async (req, reply) => {
      await ownWrites(req);
      const digest = await unresolvedDigest(deps.openItems, deps.orm.em.fork(), accountOf(req));
      const body = `{"events":${jsonArrayOf(digest.items.map((i) => i.envelope))},"summary":${JSON.stringify(digest.summary)}}`;
      return reply.type('application/json; charset=utf-8').send(body);
    });
  };
}
