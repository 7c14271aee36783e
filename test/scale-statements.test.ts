/**
 * docs/SCALE.md "Which statements are single-shard", as a test: every SQL statement of the engine
 * (the literals under src/, read by test/support/sql-columns.ts) that reads or writes a table
 * distributed by subject names that table's subject: it compares the distribution column with a
 * value (`subject_id = $1`, `= NEW.subject_id`, `IN (…)`, `= ANY (…)`), writes it (an INSERT's
 * column list), or joins the table on it to a table that does. A statement that finds a row by
 * its id or its session alone fails, and so does a join that pairs two subjects' tables without
 * the subject (once ids are unique only per subject, both can name another subject's row). The
 * statements that read every subject by design are allowlisted below, each with its reason; they
 * must still join on the subject. An entry that matches no statement, or only statements that
 * name a subject, fails the suite, so the list cannot rot.
 *
 * Blind spots are those of the literal reader: SQL built at run time from fragments that are not
 * module constants is read with `$0` in their place, and a statement whose tables all hide in
 * such a fragment is not seen at all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { engineSources } from './support/engine-sources.js';
import { createEngine } from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import {
  NOT_ALIAS,
  Schema,
  sqlLiterals,
  sqlStatements,
  type SchemaColumn,
  type SqlLiteral,
  type Token,
} from './support/sql-columns.js';
import { planFromDoc, SCALE_DOC, type Placement } from './support/scale-doc.js';

/** A statement that may leave the subject unnamed: `includes` is a piece of its text. */
export interface AllowEntry {
  file: string;
  includes: string;
  why: string;
}

/**
 * Statements that read every subject by design (docs/SCALE.md, "every shard, by design"). The
 * migrations (src/store/migrations/) are not scanned at all: their DDL and backfills run once,
 * before any engine uses the store, on the schema of their own time.
 */
const ALLOWLIST: readonly AllowEntry[] = [
  {
    file: 'src/store/export-sql.ts',
    includes: 'OR EXISTS (SELECT 1 FROM subjects) AS used',
    why: 'a restore writes a whole store into a new one only: whether the store has any subject',
  },
  {
    file: 'src/store/subject-sql.ts',
    includes: 'SELECT id FROM subjects ORDER BY id',
    why: 'engine.subjects.list(): the one administrative read of every subject',
  },
  {
    file: 'src/store/token-sql.ts',
    includes: 'FROM access_tokens t LEFT JOIN subjects s ON s.id = t.subject_id',
    why: 'authentication finds a token by its hash before its subject is known; the subject comes from the token row (one statement per authentication; on Citus it reads every shard of subjects, see docs/SCALE.md)',
  },
  // memledger reindex rebuilds every subject's index (src/store/recall-reindex.ts)
  {
    file: 'src/store/recall-reindex.ts',
    includes:
      'DELETE FROM turn_postings; DELETE FROM term_stats; DELETE FROM session_terms; DELETE FROM recall_corpus',
    why: "reindex empties every subject's index before rebuilding it",
  },
  {
    file: 'src/store/recall-reindex.ts',
    includes: 'FROM turns WHERE (subject_id, session_id, seq) > ($1, $2, $3)',
    why: 'reindex walks every turn in key order, subject first (batches read and replayed)',
  },
  {
    file: 'src/store/recall-reindex.ts',
    includes: 'UPDATE sessions s SET term_len',
    why: "reindex recomputes every session's length (joined on the subject)",
  },
  {
    file: 'src/store/recall-reindex.ts',
    includes: 'FROM facts WHERE (subject_id, id) > ($1, $2)',
    why: 'reindex walks every fact in key order, subject first',
  },
  {
    file: 'src/store/recall-reindex.ts',
    includes: 'SELECT ((SELECT count(*) FROM turns) + (SELECT count(*) FROM facts))',
    why: 'reindex counts every turn and fact for its progress report',
  },
];

/** One occurrence of a distributed table in a statement. */
interface Ref {
  table: string;
  alias: string | null;
  column: string;
  level: Level;
}

interface Level {
  parent: Level | null;
  /** Every table its FROM, JOIN, UPDATE or INSERT names, distributed or not. */
  tables: Array<{ table: string; alias: string | null; ref: Ref | null }>;
}

const OPENS_LEVEL = new Set(['select', 'with', 'insert', 'update', 'delete', 'values']);
const isWord = (t: Token | undefined, text?: string): t is Token & { kind: 'word' } =>
  t?.kind === 'word' && t.qualifier === null && (text === undefined || t.text === text);
const isPunct = (t: Token | undefined, text: string): boolean =>
  t?.kind === 'punct' && t.text === text;

/**
 * What one operand of a comparison is: a column of these distributed table occurrences (none
 * when its table is a reference table; `dc`: their distribution column), or a value (a
 * parameter, a literal, a NEW or EXCLUDED column, a CTE's column, an expression).
 */
type Operand = { kind: 'column'; refs: Ref[]; dc: boolean } | { kind: 'value' };

/** The tables of one statement that it leaves unscoped, and whether its joins carry the subject. */
function statementScope(
  tokens: Token[],
  plan: ReadonlyMap<string, Placement>,
  schema: Schema,
): { tables: string[]; unscoped: string[]; unjoined: string[] } {
  // Levels: the statement, and each parenthesis that opens a SELECT, WITH, VALUES or DML.
  const root: Level = { parent: null, tables: [] };
  const levelOf: Level[] = [];
  const stack: Array<Level | null> = [];
  let level = root;
  tokens.forEach((t, i) => {
    if (isPunct(t, '(')) {
      const next = tokens[i + 1];
      if (isWord(next) && OPENS_LEVEL.has(next.text)) {
        stack.push(level);
        level = { parent: level, tables: [] };
      } else stack.push(null);
    } else if (isPunct(t, ')')) level = stack.pop() ?? level;
    levelOf[i] = level;
  });

  // Table occurrences (FROM a [alias], b [alias] …, JOIN, UPDATE, INSERT INTO).
  const refs: Ref[] = [];
  const anchored = new Set<Ref>();
  const nameAt = (i: number, via: string): number => {
    const name = tokens[i];
    if (name?.kind !== 'word' || name.qualifier !== null || !schema.columns.has(name.text))
      return i;
    const at = levelOf[i - 1] as Level;
    let j = i + 1;
    if (isWord(tokens[j], 'as')) j += 1;
    const a = tokens[j];
    const alias = isWord(a) && !NOT_ALIAS.has(a.text) ? a.text : null;
    const placed = plan.get(name.text);
    const insertTarget = via === 'into' && isWord(tokens[i - 2], 'insert');
    const ref =
      placed?.kind === 'distributed'
        ? { table: name.text, alias, column: placed.column, level: at }
        : null;
    at.tables.push({ table: name.text, alias, ref });
    if (ref !== null) refs.push(ref);
    const after = alias === null ? i + 1 : j + 1;
    if (ref !== null && insertTarget) {
      // routed by the value it writes: the subject is in its column list, or every column is
      if (isPunct(tokens[after], '(') && !isWord(tokens[after + 1], 'select')) {
        for (let k = after + 1; k < tokens.length && !isPunct(tokens[k], ')'); k += 1) {
          if (isWord(tokens[k], ref.column)) anchored.add(ref);
        }
      } else if (!isWord(tokens[after], 'default')) anchored.add(ref);
    }
    return after;
  };
  tokens.forEach((t, i) => {
    if (!isWord(t) || !['from', 'join', 'update', 'into'].includes(t.text)) return;
    let next = nameAt(i + 1, t.text);
    while (t.text === 'from' && next > i + 1 && isPunct(tokens[next], ',')) {
      const more = nameAt(next + 1, 'from');
      if (more === next + 1) break;
      next = more;
    }
  });

  const visible = (i: number): Level[] => {
    const out: Level[] = [];
    for (let l: Level | null = levelOf[i] as Level; l !== null; l = l.parent) out.push(l);
    return out;
  };
  const operand = (i: number): Operand => {
    const t = tokens[i];
    if (t?.kind !== 'word' || isPunct(tokens[i + 1], '(')) return { kind: 'value' };
    if (t.qualifier !== null) {
      if (t.qualifier === 'new' || t.qualifier === 'excluded') return { kind: 'value' };
      for (const l of visible(i)) {
        const named = l.tables.find((x) => (x.alias ?? x.table) === t.qualifier);
        if (named === undefined) continue;
        const refs = named.ref === null ? [] : [named.ref];
        return { kind: 'column', refs, dc: named.ref?.column === t.text };
      }
      return { kind: 'value' }; // a CTE's or a sub-select's column
    }
    for (const l of visible(i)) {
      const owners = l.tables.filter((x) => schema.has(x.table, t.text));
      if (owners.length === 0) continue;
      const refs = owners.flatMap((x) => (x.ref === null ? [] : [x.ref]));
      const dc = refs.filter((r) => r.column === t.text);
      return dc.length > 0
        ? { kind: 'column', refs: dc, dc: true }
        : { kind: 'column', refs, dc: false };
    }
    return { kind: 'value' };
  };

  // Comparisons: distribution column = value anchors the table, = another's distribution
  // column links the two; any two tables compared on any columns are related (joined), and so
  // are two tables of one FROM.
  const links: Array<[Ref, Ref]> = [];
  const related: Array<[Ref, Ref]> = [];
  for (const l of new Set(refs.map((r) => r.level))) {
    const here = refs.filter((r) => r.level === l);
    for (let k = 1; k < here.length; k += 1) related.push([here[0] as Ref, here[k] as Ref]);
  }
  tokens.forEach((t, i) => {
    if (isWord(t, 'in')) {
      const left = operand(i - 1);
      if (left.kind === 'column' && left.dc) left.refs.forEach((r) => anchored.add(r));
      return;
    }
    if (!isPunct(t, '=')) return;
    const prev = tokens[i - 1];
    if (['<', '>', '!'].some((p) => isPunct(prev, p)) || isPunct(tokens[i + 1], '>')) return;
    const left = isPunct(prev, ')') ? ({ kind: 'value' } as const) : operand(i - 1);
    const right = isPunct(tokens[i + 1], '(') ? ({ kind: 'value' } as const) : operand(i + 1);
    for (const [a, b] of [
      [left, right],
      [right, left],
    ] as const) {
      if (a.kind !== 'column') continue;
      if (b.kind === 'value' && a.dc) a.refs.forEach((r) => anchored.add(r));
      if (b.kind !== 'column') continue;
      for (const x of a.refs) {
        for (const y of b.refs) {
          if (x === y) continue;
          related.push([x, y]);
          if (a.dc && b.dc) links.push([x, y]);
        }
      }
    }
  });

  // Scoped: anchored, or linked to a scoped occurrence.
  const scoped = new Set(anchored);
  for (let grew = true; grew;) {
    grew = false;
    for (const [a, b] of links) {
      if (scoped.has(a) !== scoped.has(b)) {
        scoped.add(a);
        scoped.add(b);
        grew = true;
      }
    }
  }
  // Joined: every two related occurrences are linked, directly or through others.
  const component = new Map<Ref, Ref>(refs.map((r) => [r, r]));
  const find = (r: Ref): Ref => {
    const up = component.get(r) as Ref;
    return up === r ? r : find(up);
  };
  for (const [a, b] of links) component.set(find(a), find(b));
  const unjoined = related
    .filter(([a, b]) => find(a) !== find(b))
    .map(([a, b]) => [a.table, b.table].sort().join(' and '));
  return {
    tables: [...new Set(refs.map((r) => r.table))],
    unscoped: [...new Set(refs.filter((r) => !scoped.has(r)).map((r) => r.table))],
    unjoined: [...new Set(unjoined)],
  };
}

export interface StatementReport {
  /** Statements over distributed tables that were checked. */
  checked: number;
  /** `file:line what: sql`, one per statement that leaves a distributed table unscoped. */
  unscoped: string[];
  /** Allowlist entries that match no statement, or only statements that name their subject. */
  stale: string[];
}

const oneLine = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

/** The check itself: pure, over literals, a plan, a schema and an allowlist. */
export function checkStatements(
  literals: readonly SqlLiteral[],
  plan: ReadonlyMap<string, Placement>,
  schema: Schema,
  allowlist: readonly AllowEntry[],
): StatementReport {
  const report: StatementReport = { checked: 0, unscoped: [], stale: [] };
  const used = new Map<AllowEntry, boolean>(allowlist.map((e) => [e, false]));
  for (const lit of literals) {
    for (const tokens of sqlStatements(lit.sql)) {
      const scope = statementScope(tokens, plan, schema);
      if (scope.tables.length === 0) continue;
      report.checked += 1;
      const text = oneLine(lit.sql);
      const entry = allowlist.find((e) => e.file === lit.file && text.includes(e.includes));
      const where = `${lit.file}:${lit.line}`;
      if (entry !== undefined) {
        if (scope.unscoped.length > 0) used.set(entry, true);
        if (scope.unjoined.length > 0) {
          report.unscoped.push(
            `${where} joins ${scope.unjoined.join(', ')} without the subject: ${text.slice(0, 160)}`,
          );
        }
      } else if (scope.unscoped.length > 0) {
        report.unscoped.push(
          `${where} names no subject for ${scope.unscoped.join(', ')}: ${text.slice(0, 160)}`,
        );
      }
    }
  }
  for (const [entry, matched] of used) {
    if (entry.why.trim() === '') report.stale.push(`${entry.includes}: the entry gives no reason`);
    if (!matched) {
      report.stale.push(
        `${entry.file} "${entry.includes}": matches no statement that leaves its subject unnamed`,
      );
    }
  }
  return report;
}

const PLAN = planFromDoc(SCALE_DOC);

describe('every statement names its subject (docs/SCALE.md)', () => {
  let schema: Schema;
  let literals: SqlLiteral[];
  let report: StatementReport;

  beforeAll(async () => {
    const engine = await createEngine({ db: 'memory://' });
    try {
      const { rows } = await storeClient(engine).query<{ table_name: string; column_name: string }>(
        `SELECT c.table_name, c.column_name FROM information_schema.columns c
         JOIN information_schema.tables t
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`,
      );
      schema = new Schema(
        rows.map((r): SchemaColumn => ({
          table: r.table_name,
          column: r.column_name,
          filledByDefault: false,
        })),
      );
    } finally {
      await engine.close();
    }
    literals = sqlLiterals(engineSources());
    report = checkStatements(literals, PLAN, schema, ALLOWLIST);
  });

  it('sees the statements (a scan gone blind would pass)', () => {
    expect(report.checked).toBeGreaterThan(80);
    const files = new Set(literals.map((l) => l.file));
    for (const f of ['turn-sql', 'session-sql', 'usage-sql', 'gate-turn-sql', 'retraction-sql']) {
      expect(files).toContain(`src/store/${f}.ts`);
    }
  });

  it('every statement over a distributed table names its subject, or is allowlisted', () => {
    expect(report.unscoped).toEqual([]);
  });

  it('every allowlist entry matches a statement that needs it, and says why', () => {
    expect(report.stale).toEqual([]);
  });
});

describe('the statement check (negative controls)', () => {
  const plan = new Map<string, Placement>([
    ['subjects', { kind: 'distributed', column: 'id', why: 'the subject' }],
    ['sessions', { kind: 'distributed', column: 'subject_id', why: 'per subject' }],
    ['turns', { kind: 'distributed', column: 'subject_id', why: 'per subject' }],
    ['facts', { kind: 'distributed', column: 'subject_id', why: 'per subject' }],
    ['tags', { kind: 'reference', why: 'shared' }],
  ]);
  const schema = new Schema(
    [
      ['subjects', 'id'],
      ['sessions', 'subject_id'],
      ['sessions', 'id'],
      ['sessions', 'last_seq'],
      ['turns', 'subject_id'],
      ['turns', 'session_id'],
      ['turns', 'id'],
      ['turns', 'seq'],
      ['facts', 'subject_id'],
      ['facts', 'id'],
      ['facts', 'evidence_turn_id'],
      ['tags', 'id'],
    ].map(([table = '', column = '']) => ({ table, column, filledByDefault: false })),
  );
  const lit = (sql: string): SqlLiteral => ({ file: 'src/fake.ts', line: 1, sql });
  const unscoped = (sql: string, allow: AllowEntry[] = []) =>
    checkStatements([lit(sql)], plan, schema, allow).unscoped.map((u) =>
      u.replace(/: .*$/, '').replace('src/fake.ts:1 ', ''),
    );

  it('accepts statements that name the subject', () => {
    for (const sql of [
      'SELECT id FROM turns WHERE subject_id = $1 AND session_id = $2',
      'SELECT * FROM turns t WHERE $1 = t.subject_id',
      'INSERT INTO facts (subject_id, id) VALUES ($1, $2)',
      'INSERT INTO sessions (subject_id, id) SELECT id, $2 FROM subjects WHERE id = $1',
      `WITH s AS (UPDATE sessions SET last_seq = last_seq + 1 WHERE subject_id = $1 AND id = $2
         RETURNING subject_id, id, last_seq)
       INSERT INTO turns AS t (subject_id, session_id, seq) SELECT s.subject_id, s.id, s.last_seq FROM s
       RETURNING (SELECT count(*) FROM facts f WHERE f.subject_id = t.subject_id)`,
      `SELECT f.id FROM facts f LEFT JOIN turns t ON t.subject_id = f.subject_id
         AND t.id = f.evidence_turn_id WHERE f.subject_id = $1`,
      'SELECT id FROM facts WHERE subject_id = ANY ($1::text[])',
      'SELECT id FROM facts WHERE subject_id IN ($1, $2)',
      'SELECT id FROM tags WHERE id = $1', // a reference table
    ]) {
      expect(unscoped(sql), sql).toEqual([]);
    }
  });

  it('reports a row named by its id or session alone, and a join without the subject', () => {
    expect(unscoped('SELECT subject_id, id FROM sessions WHERE id = $1')).toEqual([
      'names no subject for sessions',
    ]);
    // RETURNING the subject is not naming it
    expect(
      unscoped('UPDATE sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING subject_id'),
    ).toEqual(['names no subject for sessions']);
    expect(unscoped('SELECT * FROM turns WHERE session_id = $1 AND seq = $2')).toEqual([
      'names no subject for turns',
    ]);
    expect(
      unscoped(`SELECT f.id FROM facts f LEFT JOIN turns t ON t.id = f.evidence_turn_id
                WHERE f.subject_id = $1`),
    ).toEqual(['names no subject for turns']);
    // a sub-select that finds its row by id alone
    expect(
      unscoped(`SELECT id FROM facts f WHERE f.subject_id = $1
                AND EXISTS (SELECT 1 FROM turns t WHERE t.id = f.evidence_turn_id)`),
    ).toEqual(['names no subject for turns']);
    // an INSERT whose column list has no subject, and one whose source names none
    expect(unscoped('INSERT INTO facts (id) VALUES ($1)')).toEqual(['names no subject for facts']);
    expect(
      unscoped('INSERT INTO turns (subject_id, session_id) SELECT subject_id, id FROM sessions'),
    ).toEqual(['names no subject for sessions']);
  });

  it('allowlisted statements may name no subject, but must join on it', () => {
    const allow = [{ file: 'src/fake.ts', includes: 'FROM facts f', why: 'every subject' }];
    expect(
      unscoped('SELECT f.id FROM facts f JOIN turns t ON t.subject_id = f.subject_id', allow),
    ).toEqual([]);
    expect(
      unscoped('SELECT f.id FROM facts f JOIN turns t ON t.id = f.evidence_turn_id', allow),
    ).toEqual(['joins facts and turns without the subject']);
    expect(
      unscoped(
        `SELECT f.id FROM facts f WHERE EXISTS (SELECT 1 FROM turns t WHERE t.id = f.evidence_turn_id)`,
        allow,
      ),
    ).toEqual(['joins facts and turns without the subject']);
    // two sub-selects that do not meet are no join
    expect(
      unscoped('SELECT (SELECT count(*) FROM facts f) + (SELECT count(*) FROM turns)', allow),
    ).toEqual([]);
  });

  it('reports stale allowlist entries', () => {
    const run = (sql: string, why = 'a reason') =>
      checkStatements([lit(sql)], plan, schema, [
        { file: 'src/fake.ts', includes: 'FROM facts', why },
      ]).stale;
    expect(run('SELECT id FROM facts')).toEqual([]);
    expect(run('SELECT id FROM facts WHERE subject_id = $1')).toHaveLength(1);
    expect(run('SELECT id FROM turns')).toHaveLength(1);
    expect(run('SELECT id FROM facts', ' ')).toHaveLength(1);
  });
});
