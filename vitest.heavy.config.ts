import { defineConfig } from 'vitest/config';
import unit from './vitest.config.js';

/**
 * The heavy tier (`npm run test:heavy`, after a build): what spawns the built `memledger`, other
 * processes or Chromium, installs the packed package, or runs long property runs.
 */
export default defineConfig({
  test: {
    ...unit.test,
    include: ['test/heavy/**/*.test.ts'],
    exclude: [],
  },
});
