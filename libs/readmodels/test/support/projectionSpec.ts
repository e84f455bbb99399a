import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, holdInserts, openDatabase, releaseInserts, sql, type MikroORM } from '@oan/db';
import {
  readModelMigrations,
  type DomainEvent,
  type EventUnion,
  type NotificationSpec,
  type Projection,
  type ProjectionContext,
} from '@oan/readmodels';

/** Any context's stored event (`StoredEvent<U>` of some union), as the pipeline hands it over. */
export type AnyEvent = Omit<DomainEvent, 'data'> & { data: object };

/** One "applied twice" case: the events before it, then the event applied twice. */
export interface TwiceCase {
  given?: () => AnyEvent[];
  event: () => AnyEvent;
}

/**
 * Given / when / then over one projection against a database of its own (migrated with every read
 * model's tables, as the projector migrates it). `rows` names the selects whose results are the
 * read model's state; `then` compares them.
 */
export function projectionSpec(
  projection: Projection,
  options: {
    rows: Record<string, string>;
    ctx?: ProjectionContext;
    /** false: each insert is its own statement (the projector holds a batch's inserts: true). */
    holdInserts?: boolean;
  },
) {
  const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
  let orm: MikroORM;
  beforeAll(async () => {
    orm = await openDatabase({ url, schema: 'projector', migrations: readModelMigrations });
  });
  afterAll(async () => {
    await orm.close(true);
    await dropDatabase(url);
  });
  const ctx = options.ctx ?? {};

  /**
   * Applies the events in order in one transaction, as the projector's first stage does (holding
   * the batch's inserts until another statement or the end of the batch).
   */
  const apply = (events: AnyEvent[]): Promise<NotificationSpec[]> =>
    orm.em.fork().transactional(async (em) => {
      const out: NotificationSpec[] = [];
      if (options.holdInserts !== false) holdInserts(em);
      for (const event of events) {
        if (projection.handles.has(event.type))
          out.push(...(await projection.apply(em, event as DomainEvent, ctx)));
      }
      await releaseInserts(em);
      return out;
    });
  const query = <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
    sql<T>(orm.em.fork(), q, params);
  const rows = async (): Promise<Record<string, unknown[]>> => {
    const out: Record<string, unknown[]> = {};
    for (const [name, q] of Object.entries(options.rows)) out[name] = await query(q);
    return out;
  };

  return {
    given: (...events: AnyEvent[]) => apply(events),
    when: (...events: AnyEvent[]) => apply(events),
    query,
    rows,
    /** Runs `fn` on a fresh EntityManager of the spec's database. */
    withEm: <T>(fn: (em: MikroORM['em']) => Promise<T>): Promise<T> => fn(orm.em.fork()),
    /**
     * For each event type of the union, a test that applying the event a second time changes no
     * row and yields the same notifications. The projector names a notification by its source event,
     * recipient, type and discriminator, and keeps one OAN event per name, so the same notifications
     * again add no OAN event. The cases must name every event type of `U`.
     */
    appliedTwice<U extends EventUnion>(cases: { [K in U['type']]: TwiceCase }) {
      describe('when an event is applied a second time', () => {
        for (const [type, c] of Object.entries<TwiceCase>(cases)) {
          it(`${type} changes nothing and yields the same notifications`, async () => {
            await apply(c.given?.() ?? []);
            const event = c.event();
            expect(event.type).toBe(type);
            const first = await apply([event]);
            const after = await rows();
            const second = await apply([event]);
            expect(await rows()).toEqual(after);
            expect(second).toEqual(first);
          });
        }
      });
    },
  };
}
