import { defineConfig } from 'vitest/config';
import { FLEET_NODE_FLAGS } from '@oan/config';

// The test workers use kafkajs too, so they take the fleet's node flags: kafkajs 2.2.4 sets a negative
// timer on Node 24 (tulios/kafkajs#1751, open upstream) and its TimeoutNegativeWarning, silenced by
// name and no other, printed once per test file.
const execArgv = [...FLEET_NODE_FLAGS];

// Three tiers (STYLE.md): unit needs nothing, int needs Postgres/Redis/Kafka, e2e needs the fleet.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          execArgv,
          include: [
            '{libs,services}/*/test/**/*.unit.test.ts',
            '{libs,services}/*/src/**/*.unit.test.ts',
            'test/**/*.unit.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'int',
          execArgv,
          include: ['{libs,services}/*/test/**/*.int.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two files at a time, one per core: each file has its own database, schema, topic and
          // Redis prefix, and the files wait on Postgres, Kafka and Redis as much as on the CPU.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e',
          execArgv,
          include: ['test/**/*.e2e.test.ts'],
          // The services bundled once per run, for the fleets to start from (ADR 0048).
          globalSetup: ['test/bundles.setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
