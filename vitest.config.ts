import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The unit and integration tier (`npm test`): in process, on both engines where the engine
 * matters. What spawns processes or browsers is in test/heavy/ (`npm run test:heavy`).
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/heavy/**'],
    // Both cores: a file waits on PostgreSQL or PGlite as often as it computes.
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
  },
});
