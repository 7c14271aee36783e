/**
 * docs/SCALE.md's plan for distributing memledger by subject on Citus, checked against the real
 * schema (every migration applied, on both engines): every table is placed (distributed by the
 * subject, or a reference table with a reason); a distributed table's primary key, unique
 * constraints and unique indexes begin with its distribution column, which is NOT NULL; foreign
 * keys between distributed tables carry the distribution column on both sides; a reference
 * table points at no distributed table. Since migration 0012 nothing is left that does not
 * fit: the doc's misfit list is empty, and the check must find exactly that list (a new misfit
 * fails, and so would a fixed one left listed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeClient } from '../src/engine/test-access.js';
import type { SqlExecutor } from '../src/store/sql-client.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { docTable, ident, planFromDoc, SCALE_DOC, type Placement } from './support/scale-doc.js';

/** One table as the catalog describes it. */
export interface TableDef {
  name: string;
  notNull: readonly string[];
  /** Primary key, unique constraints and unique indexes; `null` is an expression column. */
  keys: ReadonlyArray<{ name: string; kind: 'primary' | 'unique'; columns: (string | null)[] }>;
  foreignKeys: ReadonlyArray<{
    name: string;
    columns: string[];
    refTable: string;
    refColumns: string[];
  }>;
}

/** One way the schema does not fit the plan: `constraint` names a key, a column or the table. */
export interface Misfit {
  table: string;
  constraint: string;
  problem: string;
}

/** The check itself: pure, over a schema and a plan. */
export function checkPlan(
  tables: readonly TableDef[],
  plan: ReadonlyMap<string, Placement>,
): Misfit[] {
  const out: Misfit[] = [];
  const names = new Set(tables.map((t) => t.name));
  for (const [name, placement] of plan) {
    if (!names.has(name))
      out.push({ table: name, constraint: '(table)', problem: 'not in schema' });
    if (placement.why.trim() === '') {
      out.push({ table: name, constraint: '(table)', problem: 'placed without a reason' });
    }
  }
  for (const table of tables) {
    const placement = plan.get(table.name);
    if (placement === undefined) {
      out.push({ table: table.name, constraint: '(table)', problem: 'not placed in the plan' });
      continue;
    }
    if (placement.kind === 'reference') {
      for (const fk of table.foreignKeys) {
        if (plan.get(fk.refTable)?.kind === 'distributed') {
          out.push({
            table: table.name,
            constraint: fk.name,
            problem: `a reference table refers to distributed ${fk.refTable}`,
          });
        }
      }
      continue;
    }
    const column = placement.column;
    if (!table.notNull.includes(column)) {
      out.push({ table: table.name, constraint: column, problem: `${column} may be NULL` });
    }
    if (!table.keys.some((k) => k.kind === 'primary')) {
      out.push({ table: table.name, constraint: '(primary key)', problem: 'no primary key' });
    }
    for (const key of table.keys) {
      if (key.columns[0] !== column) {
        const cols = key.columns.map((c) => c ?? '(expression)').join(', ');
        out.push({
          table: table.name,
          constraint: key.name,
          problem: `${key.kind} (${cols}) does not begin with ${column}`,
        });
      }
    }
    for (const fk of table.foreignKeys) {
      const target = plan.get(fk.refTable);
      if (target?.kind === 'reference') continue;
      const at = fk.columns.indexOf(column);
      if (target === undefined || at < 0 || fk.refColumns[at] !== target.column) {
        out.push({
          table: table.name,
          constraint: fk.name,
          problem: `(${fk.columns.join(', ')}) → ${fk.refTable} (${fk.refColumns.join(', ')}) does not carry ${column} to the distribution column`,
        });
      }
    }
  }
  return out;
}

/** Every table of the store's schema, from pg_catalog. */
async function readSchema(db: SqlExecutor): Promise<TableDef[]> {
  const { rows: tables } = await db.query<{ name: string; not_null: string[] }>(
    `SELECT c.relname AS name,
            ARRAY(SELECT a.attname::text FROM pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull
                  ORDER BY a.attnum) AS not_null
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
     ORDER BY 1`,
  );
  const cols = (rel: string, keys: string) => `ARRAY(
      SELECT a.attname::text FROM unnest(${keys}) WITH ORDINALITY k(n, i)
      LEFT JOIN pg_attribute a ON a.attrelid = ${rel} AND a.attnum = k.n ORDER BY k.i)`;
  const { rows: constraints } = await db.query<{
    table: string;
    name: string;
    type: 'p' | 'u' | 'f';
    columns: string[];
    ref_table: string | null;
    ref_columns: string[];
  }>(
    `SELECT c.relname AS table, con.conname AS name, con.contype AS type,
            ${cols('con.conrelid', 'con.conkey')} AS columns,
            f.relname AS ref_table, ${cols('con.confrelid', 'con.confkey')} AS ref_columns
     FROM pg_constraint con
     JOIN pg_class c ON c.oid = con.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_class f ON f.oid = con.confrelid
     WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u', 'f')
     ORDER BY 1, 2`,
  );
  // Unique indexes that back no constraint; key columns only (not INCLUDE), 0 = an expression.
  const { rows: indexes } = await db.query<{
    table: string;
    name: string;
    columns: (string | null)[];
  }>(
    `SELECT t.relname AS table, i.relname AS name,
            ${cols('ix.indrelid', '(ix.indkey::int2[])[0:ix.indnkeyatts - 1]')} AS columns
     FROM pg_index ix
     JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema() AND ix.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid)
     ORDER BY 1, 2`,
  );
  return tables.map((t) => ({
    name: t.name,
    notNull: t.not_null,
    keys: [
      ...constraints
        .filter((c) => c.table === t.name && c.type !== 'f')
        .map((c) => ({
          name: c.name,
          kind: c.type === 'p' ? ('primary' as const) : ('unique' as const),
          columns: c.columns,
        })),
      ...indexes
        .filter((i) => i.table === t.name)
        .map((i) => ({ name: i.name, kind: 'unique' as const, columns: i.columns })),
    ],
    foreignKeys: constraints
      .filter((c) => c.table === t.name && c.type === 'f')
      .map((c) => ({
        name: c.name,
        columns: c.columns,
        refTable: c.ref_table ?? '',
        refColumns: c.ref_columns,
      })),
  }));
}

const key = (m: { table: string; constraint: string }): string => `${m.table} ${m.constraint}`;

const PLAN = planFromDoc(SCALE_DOC);
const LISTED_MISFITS = docTable(SCALE_DOC, 'misfits').map(([table, constraint]) => ({
  table: ident(table),
  constraint: ident(constraint),
}));

describe('the distribution plan checker', () => {
  const plan = new Map<string, Placement>([
    ['subjects', { kind: 'distributed', column: 'id', why: 'the subject' }],
    ['notes', { kind: 'distributed', column: 'subject_id', why: 'per subject' }],
    ['tags', { kind: 'reference', why: 'shared vocabulary' }],
    ['lost', { kind: 'reference', why: '' }],
  ]);
  const subjects: TableDef = {
    name: 'subjects',
    notNull: ['id'],
    keys: [{ name: 'subjects_pkey', kind: 'primary', columns: ['id'] }],
    foreignKeys: [],
  };

  it('accepts a table that fits', () => {
    const notes: TableDef = {
      name: 'notes',
      notNull: ['subject_id', 'id'],
      keys: [
        { name: 'notes_pkey', kind: 'primary', columns: ['subject_id', 'id'] },
        { name: 'notes_one', kind: 'unique', columns: ['subject_id', 'slot'] },
      ],
      foreignKeys: [
        {
          name: 'notes_subject',
          columns: ['subject_id'],
          refTable: 'subjects',
          refColumns: ['id'],
        },
        { name: 'notes_tag', columns: ['tag'], refTable: 'tags', refColumns: ['name'] },
      ],
    };
    const tags: TableDef = { name: 'tags', notNull: [], keys: [], foreignKeys: [] };
    const fits = new Map([...plan].filter(([n]) => n !== 'lost'));
    expect(checkPlan([subjects, notes, tags], fits)).toEqual([]);
  });

  it('reports every kind of misfit (negative control)', () => {
    const notes: TableDef = {
      name: 'notes',
      notNull: ['id'],
      keys: [
        { name: 'notes_pkey', kind: 'primary', columns: ['id'] },
        { name: 'notes_expr', kind: 'unique', columns: [null] },
      ],
      foreignKeys: [
        {
          name: 'notes_session',
          columns: ['session_id'],
          refTable: 'subjects',
          refColumns: ['id'],
        },
        {
          name: 'notes_crossed',
          columns: ['subject_id', 'other'],
          refTable: 'notes',
          refColumns: ['id', 'subject_id'],
        },
      ],
    };
    const tags: TableDef = {
      name: 'tags',
      notNull: [],
      keys: [],
      foreignKeys: [
        { name: 'tags_note', columns: ['note'], refTable: 'notes', refColumns: ['id'] },
      ],
    };
    const stray: TableDef = { name: 'stray', notNull: [], keys: [], foreignKeys: [] };
    expect(checkPlan([subjects, notes, tags, stray], plan).map(key).sort()).toEqual(
      [
        'lost (table)', // placed, but not in the schema
        'lost (table)', // and placed without a reason
        'notes subject_id',
        'notes notes_pkey',
        'notes notes_expr',
        'notes notes_session',
        'notes notes_crossed',
        'tags tags_note',
        'stray (table)',
      ].sort(),
    );
  });
});

describe.each(ENGINES)('the schema against docs/SCALE.md [%s]', (kind) => {
  let t: TestEngine;
  let db: SqlExecutor;
  beforeAll(async () => {
    t = await openTestEngine(kind);
    db = storeClient(t.engine);
  });
  afterAll(async () => {
    await t.close();
  });

  it('places every table, and its misfits are exactly the ones the doc lists', async () => {
    const tables = await readSchema(db);
    // The catalog reader sees the schema (a reader that saw nothing would pass anything).
    expect(tables.map((x) => x.name)).toEqual(expect.arrayContaining(['turns', 'access_tokens']));
    expect(tables.find((x) => x.name === 'turns')?.keys).toContainEqual({
      name: 'turns_pkey',
      kind: 'primary',
      columns: ['subject_id', 'session_id', 'seq'],
    });
    const found = checkPlan(tables, PLAN);
    expect(found.filter((m) => m.constraint === '(table)')).toEqual([]);
    expect(found.map(key).sort()).toEqual(LISTED_MISFITS.map(key).sort());
    // Migration 0012 fixed every one: a misfit is fixed, not listed.
    expect(LISTED_MISFITS).toEqual([]);
  });

  it('finds a misfit the catalog holds (negative control on the real reader)', async () => {
    // turns has no UNIQUE (id) any more (migration 0012): the bad key pairs the columns of its
    // (subject_id, id) key crosswise, the subject with a turn's id.
    await db.exec(`CREATE TABLE scale_bad (
      subject_id text REFERENCES subjects (id),
      id text PRIMARY KEY,
      turn_id text,
      CONSTRAINT scale_bad_turn_id_fkey FOREIGN KEY (subject_id, turn_id)
        REFERENCES turns (id, subject_id))`);
    await db.exec('CREATE UNIQUE INDEX scale_bad_lower ON scale_bad (lower(id))');
    try {
      const tables = await readSchema(db);
      const plan = new Map(PLAN).set('scale_bad', {
        kind: 'distributed',
        column: 'subject_id',
        why: 'a test table',
      });
      expect(
        checkPlan(tables, plan)
          .filter((m) => m.table === 'scale_bad')
          .map(key)
          .sort(),
      ).toEqual(
        [
          'scale_bad subject_id',
          'scale_bad scale_bad_pkey',
          'scale_bad scale_bad_lower',
          'scale_bad scale_bad_turn_id_fkey',
        ].sort(),
      );
      expect(checkPlan(tables, PLAN).map(key)).toContain('scale_bad (table)');
    } finally {
      await db.exec('DROP TABLE scale_bad');
    }
  });
});
