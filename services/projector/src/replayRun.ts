import { Redis } from 'ioredis';
import { openDatabase, sql, type MikroORM } from '@oan/db';
import { createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { forgetKnownOffsets, readModelTables } from '@oan/projection';
import { topicNames, type ProjectorConfig } from './config.ts';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { startPipeline } from './pipeline.ts';

/**
 * Empties every read model, the OAN event table and the stages' stored offsets and dead letters, and
 * makes this process forget the offsets it knew: what a replay starts from.
 */
export async function emptyReadModels(orm: MikroORM): Promise<void> {
  await orm.em.fork().transactional(async (em) => {
    // Every read model: one left out would be replayed onto its old rows (inserts are
    // `on conflict do nothing`), so a corrupted or stale row would survive the rebuild.
    await sql(em, `truncate ${(await readModelTables(em)).join(', ')}`);
    await sql(em, 'delete from projector.offsets');
    await sql(em, 'delete from projector.dead_letters');
  });
  forgetKnownOffsets();
}

export interface ReplayProgress {
  done: number;
  total: number;
}

/**
 * Replay rebuilds every read model: empties the read models and the OAN event table, rewinds both
 * consumer groups to offset zero and consumes every topic up to the end offsets seen at the start. The
 * projector must be stopped (its groups must have no live member); the replayed rows are what it would
 * have written.
 */
export async function runReplay(
  cfg: ProjectorConfig,
  onProgress: (p: ReplayProgress) => void = () => undefined,
): Promise<{ records: number; seconds: number; stopSeconds: number }> {
  const logger = createLogger('replay', cfg.LOG_LEVEL === 'info' ? 'warn' : cfg.LOG_LEVEL);
  const orm = await openDatabase({
    logger,
    url: cfg.DATABASE_URL,
    schema: 'projector',
    migrations,
    synchronousCommit: false,
  });
  const kafka = createKafka({
    brokers: cfg.KAFKA_BROKERS,
    brokerRoutes: cfg.KAFKA_BROKER_ROUTES,
    clientId: 'oan-replay',
    logger,
    topicPartitions: cfg.KAFKA_TOPIC_PARTITIONS,
  });
  const redis = new Redis(cfg.REDIS_URL, { lazyConnect: true });
  const t = topicNames(cfg);
  try {
    const admin = await kafka.admin();
    // A projector that was just killed stays a member until its session times out: wait, bounded.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { groups } = await admin.describeGroups([t.domainGroup, t.oanGroup]);
      const busy = groups.filter((g) => g.members.length > 0).map((g) => g.groupId);
      if (busy.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(`Stop the projector first: consumer groups ${busy.join(', ')} have live members`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }

    await kafka.ensureTopics([...t.domain, t.oan].map((topic) => ({ topic })));
    const targets = new Map<string, bigint>();
    for (const topic of [...t.domain, t.oan]) {
      for (const p of await admin.fetchTopicOffsets(topic))
        targets.set(`${topic}:${p.partition}`, BigInt(p.high));
    }
    const total = [...targets.values()].reduce((a, b) => a + b, 0n);

    await emptyReadModels(orm);
    // Both groups forget their committed offsets, so the replay's consumers start from the earliest
    // offset (`fromBeginning`). One request, where resetting each topic's offsets took seconds apiece.
    await admin.deleteGroups([t.domainGroup, t.oanGroup]).catch((err: unknown) => {
      const failed = (err as { groups?: { errorCode?: number }[] }).groups ?? [];
      // 69: GROUP_ID_NOT_FOUND, a group that never committed: nothing to forget.
      if (failed.length === 0 || failed.some((g) => g.errorCode !== 69)) throw err;
    });

    const reached = new Map<string, bigint>();
    const started = Date.now();
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const check = () => {
      const done = [...reached.values()].reduce((a, b) => a + b, 0n);
      onProgress({ done: Number(done), total: Number(total) });
      if ([...targets].every(([k, high]) => (reached.get(k) ?? 0n) >= high)) finish();
    };
    const pipeline = await startPipeline({
      cfg,
      orm,
      kafka,
      registry: new SchemaRegistry(SCHEMAS_DIR),
      redis,
      logger,
      mode: 'replay',
      onApplied: (topic, partition, next) => {
        reached.set(`${topic}:${partition}`, next);
        check();
      },
    });
    check();
    await finished;
    // Timed to the last record applied (its transaction committed), as a bare consumer is timed to the
    // last record it received; leaving the groups is reported apart.
    const seconds = (Date.now() - started) / 1000;
    await pipeline.stop();
    return { records: Number(total), seconds, stopSeconds: (Date.now() - started) / 1000 - seconds };
  } finally {
    await kafka.close();
    redis.disconnect();
    await orm.close();
  }
}
