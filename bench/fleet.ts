import { randomBytes } from 'node:crypto';
import { createKafka, silentLogger } from '@oan/kafka';
import { ensureInfra, TestFleet } from '@oan/testing';

const DOMAIN_TOPICS = ['auth', 'gofers', 'matching', 'conversations', 'oan'];

/**
 * A TestFleet whose event topics have `partitions` partitions (the services create missing topics
 * with the broker default, one here): created beforehand under a prefix of our own, so accounts
 * spread over partitions as they would in production.
 */
export async function partitionedFleet(
  partitions: number,
  env: Record<string, string> = {},
): Promise<TestFleet> {
  ensureInfra();
  const prefix = `b${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
  const kafka = createKafka({
    brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    clientId: 'bench-topics',
    logger: silentLogger,
  });
  await kafka.ensureTopics(
    DOMAIN_TOPICS.map((t) => ({ topic: `${prefix}${t}.events`, numPartitions: partitions })),
  );
  await kafka.close();
  return TestFleet.start({ env: { LOG_LEVEL: 'warn', TOPIC_PREFIX: prefix, ...env } });
}

/** A small, valid auth event for benches to append in bulk (it yields one `system_notice`). */
export const benchNotice = (accountId: string, installed: string) => ({
  type: 'ConnectorOutdatedNoticed',
  partitionKey: accountId,
  occurredAt: new Date().toISOString(),
  data: {
    accountId,
    connector: 'bench',
    installed,
    latest: '9.9.9',
    noticedAt: new Date().toISOString(),
  },
});
