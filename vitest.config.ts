import { defineConfig } from 'vitest/config';

// Three tiers (STYLE.md): unit needs nothing, int needs Postgres/Redis/Kafka, e2e needs the fleet.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
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
          include: ['{libs,services}/*/test/**/*.int.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
