import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Package tests that start real processes (the tether CLI and its daemon, PostgreSQL, git
 * worktrees) or say so by their name (*.int.test.ts): each file in a fresh worker, as tests/ are.
 */
const processTests = [
  'packages/cli/src/tether-*.test.ts',
  'packages/store-postgres/src/**/*.test.ts',
  'packages/workspace-git/src/**/*.test.ts',
  '**/*.int.test.ts',
];

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
    globalSetup: ['scripts/vitest-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll's own default is 1 s: what a page or a process shows "soon" took 2.3 s under load (a
    // close's answer waits for its agent to exit). A poll ends as soon as it holds.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // The real claude binary uses ~1.4 cores while streaming; more workers only add contention.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        extends: true,
        test: {
          name: 'units',
          include: ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...processTests],
          // ~140 files of a few ms each: a fresh worker per file cost ~0.45 s apiece and its imports
          // again (51 s for them on a 2-core machine, 17 s without), the suite's CPU the real-CLI
          // tests need. They keep no state between files: every one passes run alone or together.
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: ['tests/**/*.test.ts', ...processTests] },
      },
    ],
  },
});
