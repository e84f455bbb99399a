import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { brokersFromEnv, createKafka, silentLogger } from '@oan/kafka';
import { withClient } from './support.ts';

/**
 * Scanners over everything a test fleet keeps (its database, its topics, its Redis keys), for tests
 * that prove a value is stored nowhere, or somewhere. Each answers, per needle, where it was found;
 * `scanned` counts what was looked at, so a scan that saw nothing cannot pass for a clean one.
 */
export interface Scan {
  scanned: number;
  /** needle → where it was found (a table, a topic/partition@offset and field, a Redis key). */
  hits: Map<string, string[]>;
}

const emptyHits = (needles: string[]) => new Map(needles.map((n) => [n, [] as string[]]));

/** Records `where` for each needle the bytes contain. */
function look(hits: Map<string, string[]>, bytes: Buffer | string | null | undefined, where: string): void {
  if (bytes === null || bytes === undefined) return;
  for (const [needle, places] of hits) if (bytes.includes(needle)) places.push(where);
}

/**
 * Every row of every base table in every schema of the fleet's database, as `to_jsonb` text; a
 * needle is also looked for as the hex `to_jsonb` writes for a bytea column.
 */
export async function scanPostgres(databaseUrl: string, needles: string[]): Promise<Scan> {
  const hits = emptyHits(needles);
  return withClient(databaseUrl, async (client) => {
    const tables = await client.query<{ t: string }>(
      `select format('%I.%I', table_schema, table_name) as t from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    for (const { t } of tables.rows) {
      const rows = await client.query<{ row: string }>(`select to_jsonb(x)::text as row from ${t} x`);
      const dump = rows.rows.map((r) => r.row).join('\n');
      for (const [needle, places] of hits) {
        const hex = Buffer.from(needle).toString('hex');
        if (dump.includes(needle) || dump.includes(hex)) places.push(t);
      }
    }
    return { scanned: tables.rows.length, hits };
  });
}

/**
 * Every record of every topic under the fleet's TOPIC_PREFIX, each partition from its start to the
 * end it had when the scan began, uncommitted records included: raw key and value bytes and every
 * header. The group is named under the prefix, so the fleet's teardown removes it.
 */
export async function scanKafka(env: Record<string, string>, needles: string[]): Promise<Scan> {
  const hits = emptyHits(needles);
  const prefix = env.TOPIC_PREFIX!;
  const kafka = createKafka({
    brokers: brokersFromEnv(env),
    clientId: `${prefix}scan`,
    logger: silentLogger,
  });
  try {
    const admin = await kafka.admin();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    /** topic/partition → the last offset it had when the scan began. */
    const pending = new Map<string, bigint>();
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(p.high) > BigInt(p.low)) pending.set(`${topic}/${p.partition}`, BigInt(p.high) - 1n);
      }
    }
    const consumer = await kafka.consumer({
      groupId: `${prefix}scan-${randomUUID()}`,
      readUncommitted: true,
    });
    let scanned = 0;
    const reachedEnd = new Promise<void>((resolve) => {
      // Fired for every batch, also one made only of control records, with the last offset it covered.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const where = `${payload.topic}/${payload.partition}`;
        const last = pending.get(where);
        if (last !== undefined && BigInt(payload.lastOffset) >= last) pending.delete(where);
        if (pending.size === 0) resolve();
      });
      if (pending.size === 0) resolve();
    });
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        scanned++;
        const at = `${topic}/${partition}@${message.offset}`;
        look(hits, message.key, `${at} key`);
        look(hits, message.value, `${at} value`);
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          for (const v of [value].flat()) look(hits, v, `${at} header ${name}`);
        }
      },
    });
    await Promise.race([
      reachedEnd,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`kafka scan stuck before ${[...pending.keys()].join(', ')}`)),
          60_000,
        ),
      ),
    ]);
    return { scanned, hits };
  } finally {
    await kafka.close();
  }
}

/** Every key under the fleet's REDIS_PREFIX, whatever its type: names, values, stream entries, members. */
export async function scanRedis(env: Record<string, string>, needles: string[]): Promise<Scan> {
  const hits = emptyHits(needles);
  const redis = new Redis(env.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let scanned = 0;
  try {
    await redis.connect();
    const stream = redis.scanStream({ match: `${env.REDIS_PREFIX!}*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      for (const key of keys) {
        scanned++;
        look(hits, key, `${key} (name)`);
        for (const value of await valuesOf(redis, key)) look(hits, value, key);
      }
    }
    return { scanned, hits };
  } finally {
    redis.disconnect();
  }
}

async function valuesOf(redis: Redis, key: string): Promise<string[]> {
  const type = await redis.type(key);
  switch (type) {
    case 'string':
      return [(await redis.get(key)) ?? ''];
    case 'hash':
      return Object.entries(await redis.hgetall(key)).flat();
    case 'list':
      return redis.lrange(key, 0, -1);
    case 'set':
      return redis.smembers(key);
    case 'zset':
      return redis.zrange(key, 0, -1);
    case 'stream':
      return (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
    case 'none':
      return []; // expired between the scan and the read
    default:
      throw new Error(`redis key ${key} has a type the scan does not read: ${type}`);
  }
}

/** Where each needle occurs among texts (log lines, webhook bodies, prompts), by index. */
export function scanTexts(texts: string[], needles: string[]): Scan {
  const hits = emptyHits(needles);
  texts.forEach((text, i) => look(hits, text, `#${i}`));
  return { scanned: texts.length, hits };
}
