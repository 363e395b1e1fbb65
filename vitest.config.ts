import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests run against package sources, not build output (see each package.json's exports).
    conditions: ['@tether/source'],
  },
  ssr: {
    resolve: {
      conditions: ['@tether/source'],
    },
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    globalSetup: ['scripts/vitest-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The real claude binary uses ~1.4 cores while streaming; more workers only add contention.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
