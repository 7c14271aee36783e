import { defineConfig } from 'vitest/config';
import unit, { PACKAGE_ALIAS } from './vitest.config.js';

// the unit tier's settings, without its projects
const shared = { ...unit.test };
delete shared.projects;

/**
 * The heavy tier (`npm run test:heavy`, after a build): what spawns the built `memledger`, other
 * processes or Chromium, or installs the packed package.
 */
export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  // a process per file: these tests start, signal and kill processes of their own
  test: { ...shared, pool: 'forks', include: ['test/heavy/**/*.test.ts'] },
});
