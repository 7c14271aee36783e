import { resolve } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files whose PostgreSQL half needs the server to itself: two count the statements a kept
 * trust view sends (a transaction any other file ends on the shared server moves the snapshots
 * those counts depend on), and the forget test reads the relation files for dead row versions
 * (a transaction another file holds open keeps them: VACUUM FULL keeps what it might still see).
 * That half runs in the `quiet` project, one file at a time, after everything else, the three in
 * one worker that keeps its modules between them (no file of it replaces a module).
 */
export const QUIET_FILES = [
  'test/trust-neutral-writes.test.ts',
  'test/trust-view-cache.test.ts',
  'test/forget.test.ts',
];

/**
 * Test files that replace a module (`vi.mock`, `vi.doMock`, `vi.resetModules`): they run in the
 * `isolated` project, each in a module graph of its own. Every other file of this tier shares its
 * worker's modules with the files that worker ran before (`isolate: false`): src, PGlite's
 * compiled WebAssembly and the test support are loaded once per worker, not once per file.
 */
export const ISOLATED_FILES = [
  'test/subject-keys-migration.test.ts',
  'test/local-embedder.test.ts',
];

/**
 * The unit and integration tier (`npm test`): in process, on both engines where the engine
 * matters. What spawns processes or browsers is in test/heavy/ (`npm run test:heavy`).
 */
/** The package by name, as examples/ import it (a user's project does), resolved to its sources. */
export const PACKAGE_ALIAS = [
  { find: /^memledger$/, replacement: resolve(import.meta.dirname, 'src/index.ts') },
  { find: /^memledger\/rules$/, replacement: resolve(import.meta.dirname, 'src/rules.ts') },
  {
    find: /^memledger\/(ai-sdk|openai-agents|langgraph|claude)$/,
    replacement: `${resolve(import.meta.dirname, 'adapters')}/$1.ts`,
  },
];

export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    // Worker threads on both cores: a file waits on PostgreSQL or PGlite as often as it
    // computes, and a thread starts a test file for less than a process (7 min to 5.7 here)
    pool: 'threads',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/store-template.ts'],
    reporters: [
      'default',
      './test/support/engine-count-reporter.ts',
      './test/support/slowest-files-reporter.ts',
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/heavy/**', ...ISOLATED_FILES],
          env: { MEMLEDGER_TEST_QUIET: '' },
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ISOLATED_FILES,
          env: { MEMLEDGER_TEST_QUIET: '' },
        },
      },
      {
        extends: true,
        test: {
          name: 'quiet',
          include: QUIET_FILES,
          env: { MEMLEDGER_TEST_QUIET: '1' },
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
