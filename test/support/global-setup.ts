import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { makeEmbeddedTemplate } from '../../src/engine/test-access.js';
import { migrationChecksum } from '../../src/store/migrator.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { ANALYZER_VERSION } from '../../src/domain/text/analyze.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A freshly migrated embedded store's data directory (a tarball). */
    embeddedTemplatePath: string;
    /** An embedded store's data directory before any migration (a tarball). */
    emptyTemplatePath: string;
  }
}

const ROOT = resolve(import.meta.dirname, '../..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'memledger-test');

/**
 * What a template depends on: the PGlite build, every migration's text, and the recall analyzer's
 * version (a template keeps the version its postings were built by).
 */
function templateKey(): string {
  const version = (name: string): string =>
    (
      JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  const hash = createHash('sha256')
    .update(`pglite ${version('@electric-sql/pglite')}\n`)
    .update(`pgvector ${version('@electric-sql/pglite-pgvector')}\n`);
  for (const m of MIGRATIONS) hash.update(`${m.version} ${migrationChecksum(m)}\n`);
  hash.update(`analyzer ${ANALYZER_VERSION}\n`);
  return hash.digest('hex').slice(0, 16);
}

/**
 * Migrates one embedded store and hands its dump to every worker (test/support/store-template.ts):
 * a new PGlite store then starts from it in about a third of the time initdb takes; and one not
 * migrated, for the tests that build a store of an older release. The dumps are kept under
 * node_modules/.cache for the next run while PGlite and the migrations are the same; the
 * migrations still run on each store, so a template cannot hide one.
 */
export default async function setup(project: TestProject): Promise<void> {
  const key = templateKey();
  project.provide('embeddedTemplatePath', await cached(`store-${key}.tar`, {}));
  project.provide('emptyTemplatePath', await cached(`empty-${key}.tar`, { migrated: false }));
}

/** The cache's copy of a template, made first when it is missing. */
async function cached(name: string, options: { migrated?: boolean }): Promise<string> {
  const path = join(CACHE, name);
  if (!existsSync(path)) {
    mkdirSync(CACHE, { recursive: true });
    const template = await makeEmbeddedTemplate(options);
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, new Uint8Array(await template.arrayBuffer()));
    renameSync(temp, path);
  }
  return path;
}
