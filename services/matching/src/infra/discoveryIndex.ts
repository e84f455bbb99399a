import { Migration, sql, TEXT_ARRAY, type EntityManager, type MigrationDef } from '@oan/db';
import { demandTerms, offerTerms, type PublicProfile } from '../domain/discovery.ts';
import { LIVE_GOFERS } from '@oan/readmodels';

/**
 * Discovery's full-text index (domain/discovery.ts, docs/adr/0012), owned by the matching context.
 *
 * Why a side table of terms and not an expression index over `read.gofers`: the terms are
 * discovery.ts's own tokenizer (stop words, light stemming, CJK bigrams) so that the query and
 * `relevance()` never disagree; Postgres cannot compute them in an IMMUTABLE expression without a
 * second, drifting implementation of the tokenizer in SQL. So the discovery reactor writes
 * `array_to_tsvector(terms)` itself, from the `GoferProfileUpdated` events it already consumes on
 * `gofers.events` (in partition order, so never behind the `GoferDiscoveryStatusChanged` that follows
 * the profile), with a GIN index per direction. Status, account, name and deletion still come from
 * the projector's `read.gofers`; the terms carry `profile_at` so the sweep can backfill rows whose
 * profile it never saw (`refreshDiscoveryTerms`).
 * Replay-safe: the rows are a pure function of the latest profile; a reset consumer group rebuilds
 * them from offset zero, and the sweep rebuilds them from `read.gofers`.
 */
class CreateDiscoveryTerms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists matching.discovery_terms (
      gofer_id text primary key,
      demand_tsv tsvector not null,
      offer_tsv tsvector not null,
      profile_at timestamptz not null)`);
    this.addSql(
      'create index if not exists discovery_terms_offer on matching.discovery_terms using gin (offer_tsv)',
    );
    this.addSql(
      'create index if not exists discovery_terms_demand on matching.discovery_terms using gin (demand_tsv)',
    );
    // The partial index on ready read.gofers rows is the projector's (its migration read-0004).
  }
}

/**
 * To list after `matchingMigrations(store)` in the matching service (schema `matching`). It also adds
 * a partial index on `read.gofers`, so the projector's `read-0004-gofers` must have run (both open the
 * same database; the projector creates `read` first in every deployment and test fleet).
 */
/**
 * Readiness as discovery itself consumed it. The read model (`read.gofers`) is built by another
 * consumer of the same topic and may lag: two Gofers turning ready at once could each look for the
 * other before the projector applied it, and neither would find the other until a sweep. Each handler
 * records its own Gofer's readiness before it searches, so the later of the two always finds the first.
 */
class AddDiscoveryReadiness extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table matching.discovery_terms add column if not exists ready boolean');
  }
}

export const discoveryIndexMigrations: MigrationDef[] = [
  { name: 'matching-0002-discovery-terms', class: CreateDiscoveryTerms },
  { name: 'matching-0003-discovery-readiness', class: AddDiscoveryReadiness },
];

/** Records a Gofer's readiness as the discovery reactor read it from the log (null = not seen yet). */
export async function recordReadiness(em: EntityManager, goferId: string, ready: boolean): Promise<void> {
  await sql(
    em,
    `insert into matching.discovery_terms (gofer_id, demand_tsv, offer_tsv, profile_at, ready)
     values (?, ''::tsvector, ''::tsvector, 'epoch', ?)
     on conflict (gofer_id) do update set ready = excluded.ready`,
    [goferId, ready],
  );
}

/** A tsvector lexeme is at most 2 KiB; a longer "word" can never be shared anyway. */
const lexemes = (terms: string[]) => terms.filter((t) => Buffer.byteLength(t) < 2046);

/** The terms of one profile as the index stores them. */
export function discoveryTerms(p: PublicProfile): { demands: string[]; offers: string[] } {
  return { demands: lexemes(demandTerms(p)), offers: lexemes(offerTerms(p)) };
}

/** Writes one Gofer's terms unless a newer profile is already indexed (redelivery, out-of-order sweep). */
export async function upsertDiscoveryTerms(
  em: EntityManager,
  goferId: string,
  profile: PublicProfile,
  profileAt: string,
): Promise<void> {
  const { demands, offers } = discoveryTerms(profile);
  await sql(
    em,
    `insert into matching.discovery_terms (gofer_id, demand_tsv, offer_tsv, profile_at)
     values (?, array_to_tsvector(${TEXT_ARRAY}), array_to_tsvector(${TEXT_ARRAY}), ?)
     on conflict (gofer_id) do update set demand_tsv = excluded.demand_tsv, offer_tsv = excluded.offer_tsv,
       profile_at = excluded.profile_at
     where matching.discovery_terms.profile_at <= excluded.profile_at`,
    [goferId, JSON.stringify(demands), JSON.stringify(offers), profileAt],
  );
}

/**
 * Backfills the terms of ready Gofers whose indexed profile is missing or older than the read
 * model's (a deployment that starts after profiles were written, a consumer that skipped a record).
 * Returns how many rows it wrote.
 */
export async function refreshDiscoveryTerms(em: EntityManager, batch = 1000): Promise<number> {
  let written = 0;
  for (;;) {
    const rows = await sql<{
      id: string;
      name: string;
      description: string;
      values: unknown;
      demands: unknown;
      updated_at: Date | string;
    }>(
      em,
      `select g.id, g.name, g.description, g."values", g.demands, g.updated_at
         from ${LIVE_GOFERS} g
         left join matching.discovery_terms t on t.gofer_id = g.id
        where g.discovery_status = 'ready_for_pairing'
          and (t.gofer_id is null or t.profile_at < g.updated_at)
        order by g.id
        limit ?`,
      [batch],
    );
    for (const r of rows) {
      const profile: PublicProfile = {
        name: r.name,
        description: r.description,
        values: strings(r.values),
        demands: strings(r.demands),
      };
      const at = r.updated_at instanceof Date ? r.updated_at.toISOString() : r.updated_at;
      await upsertDiscoveryTerms(em, r.id, profile, at);
    }
    written += rows.length;
    if (rows.length < batch) return written;
  }
}

export const strings = (v: unknown): string[] => {
  const parsed: unknown = typeof v === 'string' ? JSON.parse(v) : v;
  return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
};
