import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { makeEmbeddedTemplate } from '../../src/engine/test-access.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A freshly migrated embedded store's data directory (a tarball), made once per run. */
    embeddedTemplatePath: string;
  }
}

/**
 * Migrates one embedded store before any test file runs and hands its dump to every worker
 * (test/support/store-template.ts): a new PGlite store then starts from it in about a third of
 * the time initdb takes. The migrations still run on each store, so the template cannot hide one.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'memledger-template-'));
  const path = join(dir, 'store.tar');
  const template = await makeEmbeddedTemplate();
  writeFileSync(path, new Uint8Array(await template.arrayBuffer()));
  project.provide('embeddedTemplatePath', path);
  return () => rmSync(dir, { recursive: true, force: true });
}
