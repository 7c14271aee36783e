import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite boots in seconds; PostgreSQL schemas are created per file.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/engine-count-reporter.ts'],
  },
});
