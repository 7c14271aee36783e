// The run's embedded template (test/support/global-setup.ts): every PGlite store a test makes
// starts from a dump of one freshly migrated store instead of initdb. The migrations still run
// on each, so a template cannot carry a store the code would refuse, and clearing it brings back
// the plain path.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { setEmbeddedTemplate, storeClient } from '../src/engine/test-access.js';
import { createEngine, type Engine } from '../src/index.js';
import { PgliteClient } from '../src/pglite/pglite-client.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { migrate } from '../src/store/migrator.js';
import type { SqlClient } from '../src/store/sql-client.js';
import { openCode } from './support/engines.js';
import { emptyTemplate, runTemplate, useRunTemplate } from './support/store-template.js';

const tmp = mkdtempSync(join(tmpdir(), 'memledger-template-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => useRunTemplate());

/** A store's dump after `change` ran on it: the run's template, or `migrations` on an empty one. */
async function templateWith(
  change: (client: SqlClient) => Promise<unknown>,
  migrations?: typeof MIGRATIONS,
): Promise<Blob> {
  const client = await PgliteClient.open({
    location: 'memory://',
    create: true,
    template: migrations === undefined ? runTemplate() : emptyTemplate(),
  });
  try {
    if (migrations !== undefined) await migrate(client, migrations);
    await change(client);
    return await client.dump();
  } finally {
    await client.close();
  }
}

async function tables(engine: Engine): Promise<string[]> {
  const { rows } = await storeClient(engine).query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() ORDER BY table_name`,
  );
  return rows.map((r) => r.name);
}

const applied = async (engine: Engine): Promise<number[]> =>
  (
    await storeClient(engine).query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    )
  ).rows.map((r) => r.version);

describe('embedded stores from the run template [pglite]', () => {
  it('each is migrated, empty and its own', async () => {
    const a = await createEngine({ db: 'memory://' });
    const b = await createEngine({ db: 'memory://' });
    try {
      expect(await applied(a)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await a.subjects.list()).toEqual([]);
      expect(a.storeId).not.toBe(b.storeId);
      await a.subjects.create('only-in-a');
      expect(await a.subjects.list()).toEqual(['only-in-a']);
      expect(await b.subjects.list()).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a memory:// store and a new directory start from the template; cleared, from initdb', async () => {
    setEmbeddedTemplate(await templateWith((c) => c.exec('CREATE TABLE template_mark (x int)')));
    const memory = await createEngine({ db: 'memory://' });
    const dir = await createEngine({ db: join(tmp, 'marked') });
    try {
      expect(await tables(memory)).toContain('template_mark');
      expect(await tables(dir)).toContain('template_mark');
    } finally {
      await memory.close();
      await dir.close();
    }
    // negative control: without a template the same calls make a store without the mark
    setEmbeddedTemplate(undefined);
    const plain = await createEngine({ db: 'memory://' });
    try {
      expect(await tables(plain)).not.toContain('template_mark');
      expect(await applied(plain)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await plain.close();
    }
  });

  it('a template one migration behind is brought up to date as the store opens', async () => {
    const last = MIGRATIONS.at(-1)?.version;
    setEmbeddedTemplate(await templateWith(async () => undefined, MIGRATIONS.slice(0, -1)));
    const engine = await createEngine({ db: 'memory://' });
    try {
      expect(await applied(engine)).toContain(last);
      expect(await applied(engine)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await engine.close();
    }
  });

  it('a template the code would refuse is refused: an altered migration, a newer store', async () => {
    const client = await PgliteClient.open({
      location: 'memory://',
      create: true,
      template: runTemplate(),
    });
    let altered: Blob;
    let newer: Blob;
    try {
      const first = `SELECT checksum FROM schema_migrations WHERE version = 1`;
      const { rows } = await client.query<{ checksum: string }>(first);
      await client.exec(`UPDATE schema_migrations SET checksum = 'altered' WHERE version = 1`);
      altered = await client.dump();
      await client.query(`UPDATE schema_migrations SET checksum = $1 WHERE version = 1`, [
        rows[0]?.checksum,
      ]);
      await client.exec(
        `INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'future', 'x')`,
      );
      newer = await client.dump();
    } finally {
      await client.close();
    }
    setEmbeddedTemplate(altered);
    expect(await openCode('memory://', true)).toBe('MIGRATION_MISMATCH');
    expect(await openCode(join(tmp, 'altered'), true)).toBe('MIGRATION_MISMATCH');
    expect(existsSync(join(tmp, 'altered'))).toBe(false);
    setEmbeddedTemplate(newer);
    expect(await openCode('memory://', true)).toBe('STORE_TOO_NEW');
  });
});
