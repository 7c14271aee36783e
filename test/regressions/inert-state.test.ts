// Seed 000 §4.2: a column written by the engine and read by no query is inert; it survives every check that is not looking for it.
import { beforeAll, describe, expect, it } from 'vitest';
import { engineSources } from '../support/engine-sources.js';
import { createEngine } from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';
import { analyse, type SchemaColumn } from '../support/sql-columns.js';

/**
 * Columns the engine writes and deliberately reads in no query. Each entry says why the value is
 * worth keeping with no reader; an entry whose column is gone, is never written, or has gained a
 * reader fails the suite, so the list cannot rot.
 */
const ALLOWLIST: Readonly<Record<string, string>> = {
  'schema_migrations.applied_at':
    'migration bookkeeping for an operator inspecting the store by hand; the migrator keys on version and checksum',
  'store_meta.created_at':
    'when the store got its identity, for an operator inspecting the store by hand; heads are keyed on store_id',
};

describe('no inert state', () => {
  let schema: SchemaColumn[] = [];
  let result: ReturnType<typeof analyse>;

  beforeAll(async () => {
    const engine = await createEngine({ db: 'memory://' });
    try {
      // schema_migrations is kept: the migrator (src/store/migrator.ts) writes it with SQL the
      // scan sees, and its columns are state like any other.
      const { rows } = await storeClient(engine).query<{
        table_name: string;
        column_name: string;
        filled_by_default: boolean;
      }>(
        `SELECT c.table_name, c.column_name,
                (c.column_default IS NOT NULL OR c.is_identity = 'YES') AS filled_by_default
         FROM information_schema.columns c
         JOIN information_schema.tables t
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
         ORDER BY c.table_name, c.ordinal_position`,
      );
      schema = rows.map((r) => ({
        table: r.table_name,
        column: r.column_name,
        filledByDefault: r.filled_by_default,
      }));
    } finally {
      await engine.close();
    }
    result = analyse(engineSources(), schema, ALLOWLIST);
  });

  it('sees the schema and a writer for every table (an analyser gone blind would pass)', () => {
    expect(new Set(schema.map((c) => c.table)).size).toBeGreaterThanOrEqual(15);
    expect(result.literals.length).toBeGreaterThan(50);
    expect(result.unwrittenTables).toEqual([]);
  });

  it('every column the engine writes is read by some query', () => {
    expect(result.inert).toEqual([]);
  });

  it('every allowlist entry names a column that exists, is written, is read by nothing, and says why', () => {
    expect(result.staleAllowlist).toEqual([]);
  });
});

describe('the analyser (negative controls)', () => {
  const schema: SchemaColumn[] = [
    { table: 'widgets', column: 'id', filledByDefault: false },
    { table: 'widgets', column: 'colour', filledByDefault: false },
    { table: 'widgets', column: 'made_at', filledByDefault: true },
    { table: 'gadgets', column: 'id', filledByDefault: false },
    { table: 'gadgets', column: 'colour', filledByDefault: false },
  ];
  const run = (code: string, allowlist: Record<string, string> = {}) =>
    analyse([{ path: 'src/fake.ts', text: code }], schema, allowlist);

  const INSERT = `await db.query(\`INSERT INTO widgets (id, colour) VALUES ($1, $2)\`, [id, c]);`;

  it('reports a column an INSERT writes and no SELECT reads', () => {
    const r = run(`${INSERT}\nawait db.query('SELECT id FROM widgets WHERE id = $1', [id]);`);
    expect(r.inert).toEqual([
      'widgets.colour: written at src/fake.ts:1 (insert); read by no query',
      'widgets.made_at: written at src/fake.ts:1 (default); read by no query',
    ]);
  });

  it('does not report it once a SELECT reads it', () => {
    const r = run(
      `${INSERT}\nawait db.query('SELECT colour, made_at FROM widgets WHERE id = $1', [id]);`,
    );
    expect(r.inert).toEqual([]);
  });

  it('expands module-level constants, also imported ones', () => {
    const local = run(`const COLS = 'id, colour, made_at';
${INSERT}
await db.query(\`SELECT \${COLS} FROM widgets\`);`);
    expect(local.inert).toEqual([]);
    const imported = analyse(
      [
        { path: 'src/a/cols.ts', text: `export const COLS = \`id, colour,\n made_at\`;` },
        {
          path: 'src/b/sql.ts',
          text: `import { COLS as C } from '../a/cols.js';\n${INSERT}\nq(\`SELECT \${C} FROM widgets\`);`,
        },
      ],
      schema,
    );
    expect(imported.inert).toEqual([]);
  });

  it('keeps tables apart: reading gadgets.colour does not read widgets.colour', () => {
    const r = run(`${INSERT}
await db.query('INSERT INTO gadgets (id, colour) VALUES ($1, $2)');
await db.query('SELECT g.colour, w.made_at FROM gadgets g JOIN widgets w ON w.id = g.id');`);
    expect(r.inert).toEqual([
      'widgets.colour: written at src/fake.ts:1 (insert); read by no query',
    ]);
  });

  it('reads an INSERT … SELECT source on its own table, and RETURNING on the inserted one', () => {
    const r = run(`${INSERT}
await db.query('INSERT INTO gadgets (id, colour) SELECT id, colour FROM widgets RETURNING id');
await db.query('SELECT made_at FROM widgets');`);
    expect(r.inert).toEqual([
      'gadgets.colour: written at src/fake.ts:2 (insert); read by no query',
    ]);
  });

  it('reads a bare name in a sub-select on its own tables first, then on the outer ones', () => {
    const r = run(`${INSERT}
await db.query('INSERT INTO gadgets (id, colour) VALUES ($1, $2)');
await db.query(\`SELECT w.id FROM widgets w
  WHERE EXISTS (SELECT 1 FROM gadgets g WHERE g.id = w.id AND colour = $1 AND made_at > $2)\`);`);
    expect(r.inert).toEqual([
      'widgets.colour: written at src/fake.ts:1 (insert); read by no query',
    ]);
  });

  it('counts SET targets as writes and their right-hand sides, RETURNING and WHERE as reads', () => {
    const r = run(`await db.query('INSERT INTO gadgets (id) VALUES ($1)');
await db.query('UPDATE gadgets SET colour = $2 WHERE id = $1');`);
    expect(r.inert).toEqual(['gadgets.colour: written at src/fake.ts:2 (set); read by no query']);
    const read = run(`await db.query('INSERT INTO gadgets (id) VALUES ($1)');
await db.query("UPDATE gadgets SET colour = $2 WHERE id = $1 RETURNING colour");`);
    expect(read.inert).toEqual([]);
  });

  it('does not count EXCLUDED.col, output aliases, casts or string literals as reads', () => {
    const r = run(`await db.query(
  \`INSERT INTO gadgets (id, colour) VALUES ($1, $2)
   ON CONFLICT (id) DO UPDATE SET colour = EXCLUDED.colour RETURNING 'colour', id AS colour, $1::colour\`,
);`);
    expect(r.inert).toEqual([
      'gadgets.colour: written at src/fake.ts:2 (insert), src/fake.ts:2 (set); read by no query',
    ]);
  });

  it('counts a name as read on every table that has it when the statement hides its table', () => {
    const r = run(
      `${INSERT}\nawait db.query(\`SELECT id, colour, made_at FROM \${tableName()}\`);`,
    );
    expect(r.inert).toEqual([]);
  });

  it('rejects allowlist entries that rot: no such column, actually read, or no reason', () => {
    const r = run(`${INSERT}\nawait db.query('SELECT id, colour FROM widgets');`, {
      'widgets.colour': 'kept for audit',
      'widgets.made_at': ' ',
      'widgets.gone': 'was removed',
    });
    expect(r.inert).toEqual([]);
    expect(r.staleAllowlist).toEqual([
      'widgets.colour: read at src/fake.ts:2 (read)',
      'widgets.made_at: the entry gives no reason',
      'widgets.gone: no such column',
    ]);
  });
});
