import { TestFleet, type TestFleetOptions } from '@oan/testing';

/**
 * A TestFleet whose event topics have `partitions` partitions (KAFKA_TOPIC_PARTITIONS: the services
 * create them so), so accounts spread over partitions as they would in production, and replicas of a
 * consumer can split them.
 */
export async function partitionedFleet(
  partitions: number,
  env: Record<string, string> = {},
  opts: Omit<TestFleetOptions, 'env'> = {},
): Promise<TestFleet> {
  return TestFleet.start({
    ...opts,
    env: { LOG_LEVEL: 'warn', KAFKA_TOPIC_PARTITIONS: String(partitions), ...env },
  });
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
