import { bannedAmong, notBanned } from '@oan/auth';
import type { GoferEvent } from '@oan/domain';
import { sql, TEXT_ARRAY, type EntityManager } from '@oan/db';
import {
  reactorMember,
  startReactorGroup,
  type ReactorMember,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import type { MatchingContext } from '../commands/context.ts';
import {
  DEFAULT_PAIRING_CAPS,
  PAIRING_THRESHOLD,
  selectPairings,
  type Candidate,
  type PairingCaps,
  type PairingLoad,
} from '../domain/discovery.ts';
import type { PairingMode, ThreadSide } from '@oan/domain';
import {
  discoverySeed,
  discoverySeeds,
  LIVE_GOFERS,
  OPEN_THREAD_STATUSES,
  threadLoads,
  type DiscoverySeedRow,
} from '@oan/readmodels';
import { proposePairing } from '../commands/threadIds.ts';
import {
  recordReadiness,
  refreshDiscoveryTerms,
  strings,
  upsertDiscoveryTerms,
} from '../infra/discoveryIndex.ts';

export interface DiscoveryDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  /** The matching command context: proposals go through `proposePairing` (inline lookups, RYW). */
  ctx: MatchingContext;
  logger: LogSink;
  topicPrefix: string;
  mode: PairingMode;
  caps?: PairingCaps;
  /** How many ranked candidates one seed looks at (the caps pick among them). */
  candidateLimit?: number;
}

export type DiscoveryRunDeps = Pick<DiscoveryDeps, 'ctx' | 'logger' | 'mode' | 'caps' | 'candidateLimit'>;

type GoferRow = DiscoverySeedRow;
interface Ranked extends GoferRow {
  score: number;
}

const OPEN: readonly string[] = OPEN_THREAD_STATUSES;
const DAY_MS = 24 * 60 * 60 * 1000;

/** `'a' | 'b'` over lexemes as stored (a cast, not `to_tsquery`: no second normalization). */
const anyOf = (terms: readonly string[]) => terms.map((t) => `'${t.replace(/['\\]/g, '')}'`).join(' | ');

const side = (g: GoferRow): ThreadSide => ({
  goferId: g.id,
  accountId: g.account_id,
  name: g.name,
  sourcePlatform: g.source_platform,
});

/**
 * The seed's ranked candidates: the same symmetric score as `relevance()` (domain/discovery.ts),
 * computed over the indexed terms. Both GIN filters must hit (a side covering nothing scores 0),
 * then ready, not deleted, another account that is not banned, and no thread with the seed yet (the
 * write side's `gofer_threads`, never behind the streams).
 */
async function rank(em: EntityManager, seed: GoferRow, limit: number): Promise<Ranked[]> {
  const [terms] = await sql<{ demands: string[]; offers: string[] }>(
    em,
    `select tsvector_to_array(demand_tsv) as demands, tsvector_to_array(offer_tsv) as offers
       from matching.discovery_terms where gofer_id = ?`,
    [seed.id],
  );
  if (!terms || terms.demands.length === 0 || terms.offers.length === 0) return [];
  const rows = await sql<Ranked>(
    em,
    `select * from (
       select g.id, g.account_id, g.name, g.source_platform,
              sqrt(
                cardinality(array(select unnest(${TEXT_ARRAY}) intersect select unnest(tsvector_to_array(t.offer_tsv))))::float8
                  / ?
                * cardinality(array(select unnest(tsvector_to_array(t.demand_tsv)) intersect select unnest(${TEXT_ARRAY})))::float8
                  / length(t.demand_tsv)
              ) as score
         from matching.discovery_terms t
         join ${LIVE_GOFERS} g on g.id = t.gofer_id
        where t.offer_tsv @@ ?::tsquery and t.demand_tsv @@ ?::tsquery
          and coalesce(t.ready, g.discovery_status = 'ready_for_pairing')
          and g.account_id <> ? and g.id <> ? and ${notBanned('g.account_id')}
          and not exists (
            select 1 from matching.gofer_threads x
              join matching.gofer_threads y on y.thread_id = x.thread_id
             where x.gofer_id = ? and y.gofer_id = g.id)
     ) ranked
     where score >= ?
     order by score desc, id asc
     limit ?`,
    [
      JSON.stringify(terms.demands),
      terms.demands.length,
      JSON.stringify(terms.offers),
      anyOf(terms.demands),
      anyOf(terms.offers),
      seed.account_id,
      seed.id,
      seed.id,
      PAIRING_THRESHOLD,
      limit,
    ],
  );
  return rows.map((r) => ({ ...r, score: Number(r.score) }));
}

/** Open threads and last-day proposals per Gofer, from the thread read model. */
async function loadsOf(em: EntityManager, goferIds: string[], now: Date): Promise<Map<string, PairingLoad>> {
  const loads = new Map<string, PairingLoad>(goferIds.map((id) => [id, { openPairings: 0, proposedAt: [] }]));
  for (const r of await threadLoads(em, goferIds, new Date(now.getTime() - DAY_MS))) {
    const load = loads.get(r.goferId)!;
    loads.set(r.goferId, {
      openPairings: load.openPairings + (OPEN.includes(r.status) ? 1 : 0),
      proposedAt: [...load.proposedAt, r.proposedAt],
    });
  }
  return loads;
}

/** Proposals this process made that the thread read model may not show yet (caps across seeds of one sweep). */
type Recent = Map<string, string[]>;

function withRecent(load: PairingLoad, recent: string[] | undefined): PairingLoad {
  if (!recent?.length) return load;
  return { openPairings: load.openPairings + recent.length, proposedAt: [...load.proposedAt, ...recent] };
}

/**
 * One seed's discovery: rank, pick under the caps (domain `selectPairings`), then propose each pair
 * on its `thread-<threadId>` stream. A pair proposed meanwhile (racing run, redelivery) appends
 * nothing: the thread id is the pair's. Returns the threads proposed.
 */
export async function discoverFor(
  deps: DiscoveryRunDeps,
  goferId: string,
  opts: { recent?: Recent; statusFromLog?: boolean } = {},
): Promise<string[]> {
  const recent = opts.recent ?? new Map<string, string[]>();
  const { ctx } = deps;
  const caps = deps.caps ?? DEFAULT_PAIRING_CAPS;
  const em = ctx.orm.em.fork();
  const seed = await discoverySeed(em, goferId, opts.statusFromLog === true);
  // Unknown to the read model yet, or deleted: the next sweep looks again. The reactor passes
  // `statusFromLog`: the record it handles says ready, whether or not the projector applied it.
  if (!seed) return [];
  // A banned account's Gofers are never proposed (the ban's reactor closes the threads they have).
  if ((await bannedAmong(em, [seed.account_id])).size > 0) return [];
  const ranked = await rank(em, seed, deps.candidateLimit ?? 50);
  if (ranked.length === 0) return [];
  const now = ctx.now();
  const loads = await loadsOf(em, [seed.id, ...ranked.map((r) => r.id)], now);
  for (const [id, load] of loads) loads.set(id, withRecent(load, recent.get(id)));
  const chosen: Candidate[] = selectPairings(
    loads.get(seed.id)!,
    ranked.map((r) => ({ goferId: r.id, score: r.score })),
    loads,
    caps,
    now.toISOString(),
  );
  const proposed: string[] = [];
  for (const c of chosen) {
    const other = ranked.find((r) => r.id === c.goferId)!;
    const { threadId, appended } = await proposePairing(
      ctx,
      { mode: deps.mode, sides: [side(seed), side(other)], score: c.score },
      [seed.account_id, other.account_id],
    );
    if (appended.length === 0) continue;
    proposed.push(threadId);
    const at = now.toISOString();
    for (const id of [seed.id, other.id]) recent.set(id, [...(recent.get(id) ?? []), at]);
    deps.logger.info({ threadId, score: c.score }, 'discovery proposed a pair');
  }
  return proposed;
}

/**
 * The periodic sweep: backfills the index from the Gofer read model, then runs discovery for every ready
 * Gofer under its caps, oldest first. Returns the threads proposed.
 */
export async function runDiscoveryOnce(deps: DiscoveryRunDeps): Promise<string[]> {
  const em = deps.ctx.orm.em.fork();
  await refreshDiscoveryTerms(em);
  const caps = deps.caps ?? DEFAULT_PAIRING_CAPS;
  const seeds = await discoverySeeds(em, caps.maxOpenPairings);
  const recent: Recent = new Map();
  const proposed: string[] = [];
  for (const id of seeds) proposed.push(...(await discoverFor(deps, id, { recent })));
  return proposed;
}

/**
 * Discovery reactor (group `<prefix>matching.discovery` on `<prefix>gofers.events`): indexes each
 * `GoferProfileUpdated`, and runs discovery for a Gofer that turns `ready_for_pairing`.
 */
export function discoveryReactor(deps: DiscoveryDeps): ReactorMember {
  const { ctx } = deps;
  return reactorMember<GoferEvent>({
    group: `${deps.topicPrefix}matching.discovery`,
    topic: `${deps.topicPrefix}gofers.events`,
    on: {
      GoferProfileUpdated: async ({ data: d }) => {
        await upsertDiscoveryTerms(
          ctx.orm.em.fork(),
          d.goferId,
          {
            name: d.name,
            description: d.description,
            values: strings(d.values),
            demands: strings(d.demands),
          },
          d.updatedAt,
        );
      },
      GoferDiscoveryStatusChanged: async ({ data: d }) => {
        // Committed before the search (see recordReadiness): of two Gofers turning ready at once, the
        // later handler finds the earlier one even when the projector has applied neither yet.
        await recordReadiness(ctx.orm.em.fork(), d.goferId, d.status === 'ready_for_pairing');
        if (d.status !== 'ready_for_pairing') return;
        await discoverFor(deps, d.goferId, { statusFromLog: true });
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startDiscovery = (deps: DiscoveryDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [discoveryReactor(deps)] });
