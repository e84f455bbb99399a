/**
 * Discovery's ranking, as pure functions: a side's demands against the other
 * side's description and values, in both directions, combined into one symmetric score.
 *
 * What the discovery reactor's Postgres query computes, so that both agree:
 *  - The discovery reactor stores, per Gofer in `matching.discovery_terms`, `demand_tsv = array_to_tsvector(
 *    demandTerms(p))` and `offer_tsv = array_to_tsvector(offerTerms(p))` — the terms of THIS module,
 *    not a Postgres dictionary, so TypeScript and SQL never disagree on stemming or CJK — each with a
 *    GIN index.
 *  - Candidates for seed S: `offer_tsv @@ to_tsquery('simple', S.demand terms joined by ' | ')` AND
 *    `demand_tsv @@ to_tsquery('simple', S.offer terms joined by ' | ')` (both directions must share
 *    a term, else the geometric mean below is 0), status `ready_for_pairing`, another account, no
 *    thread with S yet (any status, rejected included: threadId is per pair), under the caps.
 *  - Score: coverage(S→C) = |S.demands ∩ C.offer| / |S.demands| (distinct terms) and the reverse;
 *    `sqrt(coverage(S→C) * coverage(C→S))` ≥ PAIRING_THRESHOLD; order by score desc, goferId asc.
 *    Intersections: `cardinality(array(select unnest(tsvector_to_array(a)) intersect
 *    select unnest(tsvector_to_array(b))))`. `relevance()` below is the reference implementation.
 */

export interface PublicProfile {
  name: string;
  description: string;
  values: string[];
  demands: string[];
}

/** Below this symmetric score no pair is proposed. */
export const PAIRING_THRESHOLD = 0.2;

/** Words that say nothing about what is offered or wanted ("I am looking for someone who…"). */
const STOP = new Set(
  (
    'a an and are as at be been but by can could do for from has have he her his i if in into is it its ' +
    'me my of on or our she so than that the their them they this to us was we were what when where ' +
    'which who will with would you your yours about also any some such just very more most much ' +
    'looking look find finding want wants need needs someone somebody something help like get seek ' +
    'seeking'
  ).split(' '),
);

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** A light suffix stripper: `engineering`/`engineer`, `hiring`/`hire`, `roles`/`role` meet. */
function stem(word: string): string {
  let w = word;
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix) && !w.endsWith('ss')) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/**
 * Terms of a text: Latin-script words lower-cased, stop words dropped, lightly stemmed; CJK runs
 * (no spaces between words) as overlapping character bigrams, a lone character as itself.
 */
export function tokenize(text: string): string[] {
  const out = new Set<string>();
  const normalized = text.normalize('NFKC').toLowerCase();
  for (const run of normalized.match(CJK_RUN) ?? []) {
    const chars = [...run];
    if (chars.length === 1) out.add(run);
    for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  }
  for (const word of normalized.replace(CJK_RUN, ' ').match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length < 2 || STOP.has(word)) continue;
    out.add(stem(word));
  }
  return [...out].sort();
}

/** What a side wants. */
export const demandTerms = (p: PublicProfile) => tokenize(p.demands.join('\n'));
/** What a side is and offers: its description and values. */
export const offerTerms = (p: PublicProfile) => tokenize([p.description, ...p.values].join('\n'));

/** The share of `wanted` terms found in `offered` (0 when nothing is wanted). */
function coverage(wanted: string[], offered: ReadonlySet<string>): number {
  if (wanted.length === 0) return 0;
  return wanted.filter((t) => offered.has(t)).length / wanted.length;
}

export interface Relevance {
  /** Symmetric: the geometric mean of both directions, in [0, 1]. */
  score: number;
  /** How much of x's demands y offers, and the reverse. */
  xToY: number;
  yToX: number;
  /** The shared terms behind the score, sorted (the pair's reason). */
  sharedTerms: string[];
}

export function relevance(x: PublicProfile, y: PublicProfile): Relevance {
  const [xWants, yWants] = [demandTerms(x), demandTerms(y)];
  const [xOffers, yOffers] = [new Set(offerTerms(x)), new Set(offerTerms(y))];
  const xToY = coverage(xWants, yOffers);
  const yToX = coverage(yWants, xOffers);
  const shared = new Set([...xWants.filter((t) => yOffers.has(t)), ...yWants.filter((t) => xOffers.has(t))]);
  return { score: Math.sqrt(xToY * yToX), xToY, yToX, sharedTerms: [...shared].sort() };
}

export const isRelevant = (r: Relevance) => r.score >= PAIRING_THRESHOLD;

// ---- Pairing-frequency caps (the only rate limits of v1 are the matching engine's) ----

export interface PairingCaps {
  /** Threads awaiting confirmation or active, per Gofer. */
  maxOpenPairings: number;
  /** Proposals involving a Gofer in the last 24 hours (rolling, no time zone to agree on). */
  maxProposalsPerDay: number;
}

export const DEFAULT_PAIRING_CAPS: PairingCaps = { maxOpenPairings: 3, maxProposalsPerDay: 10 };

export interface PairingLoad {
  openPairings: number;
  /** When each of the Gofer's threads was proposed (ISO-8601); older ones are ignored. */
  proposedAt: readonly string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function proposalsInLastDay(proposedAt: readonly string[], now: string): number {
  const end = Date.parse(now);
  return proposedAt.filter((t) => {
    const at = Date.parse(t);
    return at > end - DAY_MS && at <= end;
  }).length;
}

/** Whether one more pairing may involve this Gofer now. */
export function underCaps(load: PairingLoad, caps: PairingCaps, now: string): boolean {
  return (
    load.openPairings < caps.maxOpenPairings &&
    proposalsInLastDay(load.proposedAt, now) < caps.maxProposalsPerDay
  );
}

export interface Candidate {
  goferId: string;
  score: number;
}

/**
 * Which of the ranked candidates the seed Gofer is paired with in this run: best first, while both
 * the seed and the candidate stay under their caps (each proposal counts for both sides).
 */
export function selectPairings(
  seed: PairingLoad,
  candidates: readonly Candidate[],
  loads: ReadonlyMap<string, PairingLoad>,
  caps: PairingCaps,
  now: string,
): Candidate[] {
  const ranked = [...candidates]
    .filter((c) => c.score >= PAIRING_THRESHOLD)
    .sort((p, q) => q.score - p.score || (p.goferId < q.goferId ? -1 : 1));
  const chosen: Candidate[] = [];
  let self = seed;
  for (const c of ranked) {
    if (!underCaps(self, caps, now)) break;
    const other = loads.get(c.goferId) ?? { openPairings: 0, proposedAt: [] };
    if (!underCaps(other, caps, now)) continue;
    chosen.push(c);
    self = { openPairings: self.openPairings + 1, proposedAt: [...self.proposedAt, now] };
  }
  return chosen;
}
