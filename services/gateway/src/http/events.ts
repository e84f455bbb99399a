import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from '@oan/http';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import { rateLimited } from '@oan/http';
import {
  awaitOwnWrites,
  fetchEvents,
  maxSeq,
  WRITE_SOURCES,
  type LongPollSlots,
  type WriteTracker,
} from '@oan/projection';
import { eventsQuery, PG_BIGINT_MAX } from './schemas.ts';
import { unresolvedDigest, type OpenItemsProvider } from './openItems.ts';
import type { LongPolls } from './longPoll.ts';

export interface EventRoutesDeps {
  orm: MikroORM;
  authenticator: Authenticator;
  openItems: readonly OpenItemsProvider[];
  /** The commands' recorded positions: each route first waits for the caller's own writes. */
  writes: WriteTracker;
  /** The bound of that wait (default 5 s), after which the route answers from what is there. */
  ownWritesTimeoutMs?: number;
  /** The held `GET /events?wait=N` requests, woken by the push tail (the long-poll extension). */
  longPolls: LongPolls;
  /** The per-account cap of held long-polls, over every gateway. */
  longPollSlots: LongPollSlots;
}

/** Stored envelope texts joined verbatim, so every item is byte-identical to what was pushed (the protocol requires REST and push items to be the same). */
const jsonArrayOf = (texts: readonly string[]): string => `[${texts.join(',')}]`;

const accountOf = (req: FastifyRequest): string => principalOf(req).accountId;

/** The event endpoints, registered under /api/v1 only when the gate (ENABLE_OPEN_API) is open. */
export function eventRoutes(deps: EventRoutesDeps) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    // The realm gate (OAN credentials only, no mobile JWTs) covers /events, /events/cursor and /events/unresolved.
    const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', allowBanned: true });
    // Read-your-writes (ADR 0009): after the caller's own command returned, its effects are in what these
    // routes read — the read models the digest joins (a decided request, an answered question
    // drops out) and the envelopes stage 1 produced for the caller from them (read.oan_expected).
    // Only a caller with writes the projector has not applied yet waits, bounded.
    const ownWrites = (req: FastifyRequest) =>
      awaitOwnWrites(deps.orm, deps.writes, accountOf(req), WRITE_SOURCES, {
        envelopes: true,
        ...(deps.ownWritesTimeoutMs === undefined ? {} : { timeoutMs: deps.ownWritesTimeoutMs }),
      });

    r.get('/events', { onRequest: auth, schema: { querystring: eventsQuery } }, async (req, reply) => {
      const { since, limit, wait } = req.query;
      const accountId = accountOf(req);
      // Past the largest bigint nothing can match; answering here keeps Postgres from a range error.
      const page = async () =>
        since >= PG_BIGINT_MAX ? [] : fetchEvents(deps.orm.em.fork(), accountId, since, limit);
      const send = (rows: readonly { envelope: string }[]) =>
        reply.type('application/json; charset=utf-8').send(jsonArrayOf(rows.map((row) => row.envelope)));
      if (wait === 0 || since >= PG_BIGINT_MAX) {
        await ownWrites(req);
        return send(await page());
      }

      // Long-poll: a place under the account's cap first (each held one costs a connection at the
      // edge), then subscribed before the first query, so nothing announced after it is missed;
      // between queries the request holds no database connection, only this subscription.
      const release = await deps.longPollSlots.take(accountId, wait);
      if (!release) {
        void reply.header('retry-after', '1');
        throw rateLimited('Too many long-polls held for this account');
      }
      const gone = new AbortController();
      const onClose = () => gone.abort();
      reply.raw.once('close', onClose);
      try {
        await ownWrites(req);
        const hold = deps.longPolls.subscribe(accountId, since);
        try {
          const deadline = Date.now() + wait * 1000;
          let rows = await page();
          while (rows.length === 0 && !gone.signal.aborted) {
            const woken = await hold.next(deadline - Date.now(), gone.signal);
            if (gone.signal.aborted) break;
            // Woken, or the time is up: the normal page query either way (a publish lost on the push
            // stream is still answered at the end of the wait).
            rows = await page();
            if (!woken) break;
          }
          return send(rows);
        } finally {
          hold.close();
        }
      } finally {
        reply.raw.off('close', onClose);
        await release();
      }
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
