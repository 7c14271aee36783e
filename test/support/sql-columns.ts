/**
 * A static map of which schema columns the engine's SQL writes and which it reads, for the
 * inert-state regression test (seed 000 §4.2: a field read by nobody survives every check that is
 * not looking for it).
 *
 * How it reads the code:
 * - Every string and template literal of each TypeScript file is collected (TypeScript's own
 *   parser, so quotes, escapes and nesting are exact). `${NAME}` is expanded when NAME is a
 *   module-level `const` of the same file, or a named import of one from another scanned file;
 *   any other interpolation becomes a `$0` parameter. A literal is SQL when it begins with SELECT,
 *   WITH, INSERT INTO, UPDATE … SET or DELETE FROM (any case).
 * - A column is WRITTEN by an INSERT column list (an INSERT without one writes every column), by
 *   the target of `SET col =` in an UPDATE or `DO UPDATE SET`, and, when it has a DEFAULT or is an
 *   identity, by any INSERT into its table (the database fills it on every row).
 * - A column is READ by every other mention: select lists, WHERE, ORDER BY, GROUP BY, JOIN … ON,
 *   RETURNING, right-hand sides of SET, sub-selects, INSERT … SELECT sources, ON CONFLICT targets,
 *   and `*` / `alias.*`. Not reads: SQL string literals, names after `AS` (output aliases) or `::`
 *   (types), names followed by `(` (functions), and `EXCLUDED.col` (the incoming row of an upsert:
 *   the value the statement itself is writing, not stored state).
 * - Tables: each query level (the statement, and every parenthesised sub-select, CTE body or
 *   sub-DML) has the tables its FROM, JOIN and UPDATE name, with their aliases; `alias.col` and
 *   `table.col` belong to that table. A bare `col` belongs to the tables of the innermost level
 *   that have such a column (outer levels serve correlated sub-selects); two tables of one level
 *   that share the name both get the read. In an INSERT, RETURNING and ON CONFLICT … speak of the
 *   inserted table, its SELECT part of the tables that part reads. When no visible table has the
 *   column: if the statement names no table at all (its FROM hidden in an unresolved
 *   interpolation), the table cannot be determined and it counts as read on EVERY table that has
 *   it; if it names only catalogs or CTEs (`FROM pg_timezone_names`, `FROM s`), it is theirs (a
 *   CTE's own select list or RETURNING already read its tables). These rules err towards "read".
 * - Blind spots: SQL built at run time, fragments interpolated through a non-constant expression
 *   (`${cond ? 'AND x = $2' : ''}`), and code outside the scanned files. A reader there goes
 *   unseen and its column is reported (loud); a writer there goes unseen and its column is not
 *   (silent), which is why the test also demands that every table has a writer the scan sees.
 */
import { dirname, join, normalize } from 'node:path/posix';
import ts from 'typescript';

export interface SourceText {
  /** Repository-relative path with forward slashes, e.g. `src/store/fact-sql.ts`. */
  path: string;
  text: string;
}

export interface SchemaColumn {
  table: string;
  column: string;
  /** Has a DEFAULT or is an identity: every INSERT into the table writes it. */
  filledByDefault: boolean;
}

export interface SqlLiteral {
  file: string;
  line: number;
  sql: string;
}

export type UseKind = 'insert' | 'set' | 'default' | 'read';

export interface ColumnUse {
  table: string;
  column: string;
  kind: UseKind;
  file: string;
  line: number;
}

/** Stands in for an interpolation the analyser cannot resolve. */
const UNRESOLVED = ' $0 ';

// ---------------------------------------------------------------------------------------------
// Literals
// ---------------------------------------------------------------------------------------------

interface FileContext {
  path: string;
  source: ts.SourceFile;
  consts: Map<string, ts.Expression>;
  imports: Map<string, { from: string; name: string }>;
}

function fileContext(src: SourceText, known: ReadonlySet<string>): FileContext {
  const source = ts.createSourceFile(src.path, src.text, ts.ScriptTarget.ES2022, true);
  const consts = new Map<string, ts.Expression>();
  const imports = new Map<string, { from: string; name: string }>();
  for (const stmt of source.statements) {
    if (ts.isVariableStatement(stmt) && stmt.declarationList.flags & ts.NodeFlags.Const) {
      for (const d of stmt.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer !== undefined) {
          consts.set(d.name.text, d.initializer);
        }
      }
    }
    if (
      ts.isImportDeclaration(stmt) &&
      ts.isStringLiteral(stmt.moduleSpecifier) &&
      stmt.moduleSpecifier.text.startsWith('.') &&
      stmt.importClause?.namedBindings !== undefined &&
      ts.isNamedImports(stmt.importClause.namedBindings)
    ) {
      const from = normalize(
        join(dirname(src.path), stmt.moduleSpecifier.text.replace(/\.js$/, '.ts')),
      );
      if (!known.has(from)) continue;
      for (const el of stmt.importClause.namedBindings.elements) {
        imports.set(el.name.text, { from, name: (el.propertyName ?? el.name).text });
      }
    }
  }
  return { path: src.path, source, consts, imports };
}

/** The string value of an expression, with unresolvable interpolations as `$0`; null if none. */
function stringValue(
  node: ts.Expression,
  ctx: FileContext,
  files: ReadonlyMap<string, FileContext>,
  seen: Set<string> = new Set(),
): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      text += (stringValue(span.expression, ctx, files, seen) ?? UNRESOLVED) + span.literal.text;
    }
    return text;
  }
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) {
    return stringValue(node.expression, ctx, files, seen);
  }
  if (ts.isSatisfiesExpression(node)) return stringValue(node.expression, ctx, files, seen);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = stringValue(node.left, ctx, files, seen);
    const right = stringValue(node.right, ctx, files, seen);
    if (left === null && right === null) return null;
    return (left ?? UNRESOLVED) + (right ?? UNRESOLVED);
  }
  if (ts.isIdentifier(node)) {
    const key = `${ctx.path}#${node.text}`;
    if (seen.has(key)) return null;
    const local = ctx.consts.get(node.text);
    if (local !== undefined) return stringValue(local, ctx, files, new Set([...seen, key]));
    const imported = ctx.imports.get(node.text);
    const other = imported === undefined ? undefined : files.get(imported.from);
    const init = imported === undefined ? undefined : other?.consts.get(imported.name);
    if (other !== undefined && init !== undefined && imported !== undefined) {
      return stringValue(init, other, files, new Set([...seen, key]));
    }
  }
  return null;
}

const SQL_START = new RegExp(
  [
    String.raw`^(?:SELECT\b`,
    String.raw`WITH\s+(?:RECURSIVE\s+)?[\w"]+\s*(?:\([^)]*\)\s*)?AS\s*(?:(?:NOT\s+)?MATERIALIZED\s*)?\(`,
    String.raw`INSERT\s+INTO\b`,
    String.raw`DELETE\s+FROM\b`,
    String.raw`UPDATE\s+[\w".]+\s+(?:(?:AS\s+)?\w+\s+)?SET\b)`,
  ].join('|'),
  'i',
);

export function looksLikeSql(text: string): boolean {
  return SQL_START.test(text.replace(/^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, ''));
}

/** Every SQL statement text written as a literal in the given files. */
export function sqlLiterals(sources: readonly SourceText[]): SqlLiteral[] {
  const known = new Set(sources.map((s) => s.path));
  const files = new Map(sources.map((s) => [s.path, fileContext(s, known)]));
  const out: SqlLiteral[] = [];
  for (const ctx of files.values()) {
    const visit = (node: ts.Node): void => {
      if (
        ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateExpression(node)
      ) {
        const sql = stringValue(node, ctx, files);
        if (sql !== null && looksLikeSql(sql)) {
          const { line } = ctx.source.getLineAndCharacterOfPosition(node.getStart(ctx.source));
          out.push({ file: ctx.path, line: line + 1, sql });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(ctx.source);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------------------------

/** A token of a statement: `a.b` is one word with qualifier `a`; values are parameters and literals. */
export type Token =
  | { kind: 'word'; text: string; qualifier: string | null }
  | { kind: 'star'; qualifier: string | null }
  | { kind: 'punct'; text: string }
  | { kind: 'value' };

function lex(sql: string): Token[] {
  const raw: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const rest = sql.slice(i);
    if (/\s/.test(c)) {
      i += 1;
    } else if (rest.startsWith('--')) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
    } else if (rest.startsWith('/*')) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'") {
      i += 1;
      while (i < sql.length) {
        if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i++] === "'") break;
      }
      raw.push({ kind: 'value' });
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      raw.push({
        kind: 'word',
        text: sql.slice(i + 1, end < 0 ? sql.length : end),
        qualifier: null,
      });
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '$') {
      const param = /^\$\d+/.exec(rest);
      const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(rest);
      if (param !== null) {
        i += param[0].length;
      } else if (tag !== null) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? sql.length : end + tag[0].length;
      } else {
        i += 1;
      }
      raw.push({ kind: 'value' });
    } else if (/[A-Za-z_]/.test(c)) {
      const word = (/^[A-Za-z_][\w$]*/.exec(rest) as RegExpExecArray)[0];
      raw.push({ kind: 'word', text: word.toLowerCase(), qualifier: null });
      i += word.length;
    } else if (/\d/.test(c)) {
      i += (/^\d+(?:\.\d+)?(?:e[+-]?\d+)?/i.exec(rest) as RegExpExecArray)[0].length;
      raw.push({ kind: 'value' });
    } else if (rest.startsWith('::')) {
      raw.push({ kind: 'punct', text: '::' });
      i += 2;
    } else {
      raw.push(c === '*' ? { kind: 'star', qualifier: null } : { kind: 'punct', text: c });
      i += 1;
    }
  }
  // `a.b` and `a.*` become one qualified token.
  const out: Token[] = [];
  for (let k = 0; k < raw.length; k += 1) {
    const t = raw[k] as Token;
    const dot = raw[k + 1];
    const next = raw[k + 2];
    if (t.kind === 'word' && dot?.kind === 'punct' && dot.text === '.' && next !== undefined) {
      if (next.kind === 'word') {
        out.push({ kind: 'word', text: next.text, qualifier: t.text });
        k += 2;
        continue;
      }
      if (next.kind === 'star') {
        out.push({ kind: 'star', qualifier: t.text });
        k += 2;
        continue;
      }
    }
    out.push(t);
  }
  return out;
}

/** The statements of one SQL text, each as its tokens (the lexer the column analysis uses). */
export function sqlStatements(sql: string): Token[][] {
  return splitStatements(lex(sql));
}

function splitStatements(tokens: Token[]): Token[][] {
  const out: Token[][] = [[]];
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'punct' && t.text === '(') depth += 1;
    if (t.kind === 'punct' && t.text === ')') depth -= 1;
    if (t.kind === 'punct' && t.text === ';' && depth === 0) out.push([]);
    else (out[out.length - 1] as Token[]).push(t);
  }
  return out.filter((s) => s.length > 0);
}

/** Words that can follow a table name and are not its alias. */
export const NOT_ALIAS = new Set([
  'where',
  'left',
  'right',
  'inner',
  'outer',
  'full',
  'cross',
  'natural',
  'join',
  'on',
  'using',
  'order',
  'group',
  'having',
  'limit',
  'offset',
  'set',
  'returning',
  'values',
  'select',
  'default',
  'window',
  'union',
  'except',
  'intersect',
  'for',
  'lateral',
  'tablesample',
  'overriding',
  'do',
]);

const SET_ENDS = new Set(['where', 'returning', 'from']);

export class Schema {
  readonly columns: ReadonlyMap<string, ReadonlySet<string>>;
  readonly defaults: ReadonlyMap<string, ReadonlySet<string>>;

  constructor(readonly list: readonly SchemaColumn[]) {
    const columns = new Map<string, Set<string>>();
    const defaults = new Map<string, Set<string>>();
    for (const c of list) {
      columns.set(c.table, (columns.get(c.table) ?? new Set()).add(c.column));
      if (c.filledByDefault)
        defaults.set(c.table, (defaults.get(c.table) ?? new Set()).add(c.column));
    }
    this.columns = columns;
    this.defaults = defaults;
  }

  has(table: string, column: string): boolean {
    return this.columns.get(table)?.has(column) === true;
  }

  tablesWith(column: string): string[] {
    return [...this.columns].filter(([, cols]) => cols.has(column)).map(([t]) => t);
  }
}

const isWord = (t: Token | undefined, text?: string): t is Token & { kind: 'word' } =>
  t?.kind === 'word' && t.qualifier === null && (text === undefined || t.text === text);
const isPunct = (t: Token | undefined, text: string): boolean =>
  t?.kind === 'punct' && t.text === text;

interface Use {
  table: string;
  column: string;
  kind: UseKind;
}

/** A query level: the statement itself, or a parenthesised sub-select, CTE body or sub-DML. */
interface Scope {
  parent: Scope | null;
  /** Tables its FROM, JOIN and UPDATE name (what a bare column there can belong to). */
  tables: Set<string>;
  aliases: Map<string, string>;
  /** The table an INSERT, UPDATE or DELETE at this level changes. */
  target: string | null;
  insert: boolean;
}

const OPENS_SCOPE = new Set(['select', 'with', 'insert', 'update', 'delete', 'values']);

/** The column uses of one statement. */
function statementUses(tokens: Token[], schema: Schema): Use[] {
  const uses: Use[] = [];
  const skip = new Set<number>();
  const tableAt = new Map<number, string>();

  // Scopes: the statement, and each parenthesis that opens a SELECT, WITH, VALUES or DML.
  const root: Scope = {
    parent: null,
    tables: new Set(),
    aliases: new Map(),
    target: null,
    insert: false,
  };
  const scopeOf: Scope[] = [];
  const parens: Array<Scope | null> = [];
  let scope = root;
  tokens.forEach((t, i) => {
    if (isPunct(t, '(')) {
      const next = tokens[i + 1];
      if (isWord(next) && OPENS_SCOPE.has(next.text)) {
        parens.push(scope);
        scope = {
          parent: scope,
          tables: new Set(),
          aliases: new Map(),
          target: null,
          insert: false,
        };
      } else {
        parens.push(null);
      }
    } else if (isPunct(t, ')')) {
      scope = parens.pop() ?? scope;
    }
    scopeOf[i] = scope;
  });

  // Tables and their aliases, per scope; whether the statement names any table at all.
  let namesSomeTable = false;
  tokens.forEach((t, i) => {
    if (!isWord(t) || !['from', 'join', 'into', 'update'].includes(t.text)) return;
    const name = tokens[i + 1];
    if (name?.kind !== 'word' || NOT_ALIAS.has(name.text)) return;
    namesSomeTable = true;
    if (!schema.columns.has(name.text)) return;
    const at = scopeOf[i] as Scope;
    tableAt.set(i + 1, name.text);
    skip.add(i + 1);
    if (t.text === 'into') {
      if (isWord(tokens[i - 1], 'insert')) {
        at.target = name.text;
        at.insert = true;
      }
    } else {
      at.tables.add(name.text);
      if (t.text === 'update' || isWord(tokens[i - 1], 'delete')) at.target = name.text;
    }
    const aliasAt = isWord(tokens[i + 2], 'as') ? i + 3 : i + 2;
    const alias = tokens[aliasAt];
    if (isWord(alias) && !NOT_ALIAS.has(alias.text)) {
      at.aliases.set(alias.text, name.text);
      skip.add(aliasAt);
    }
  });
  // In an INSERT, RETURNING and ON CONFLICT … speak of the inserted table only.
  const targetOnly: boolean[] = [];
  const tail = new Set<Scope>();
  tokens.forEach((t, i) => {
    const at = scopeOf[i] as Scope;
    if (isWord(t, 'returning') || (isWord(t, 'on') && isWord(tokens[i + 1], 'conflict'))) {
      tail.add(at);
    }
    targetOnly[i] = tail.has(at) && at.insert;
  });

  // INSERT column lists; defaults of inserted tables.
  tokens.forEach((t, i) => {
    if (!isWord(t, 'insert') || !isWord(tokens[i + 1], 'into')) return;
    const table = tableAt.get(i + 2);
    if (table === undefined) return;
    let j = i + 3;
    if (isWord(tokens[j], 'as')) j += 2;
    const explicit = new Set<string>();
    const first = tokens[j + 1];
    if (isPunct(tokens[j], '(') && !(isWord(first) && OPENS_SCOPE.has(first.text))) {
      for (j += 1; j < tokens.length && !isPunct(tokens[j], ')'); j += 1) {
        const col = tokens[j];
        if (col?.kind === 'word') {
          skip.add(j);
          explicit.add(col.text);
          uses.push({ table, column: col.text, kind: 'insert' });
        }
      }
    } else if (!(isWord(tokens[j], 'default') && isWord(tokens[j + 1], 'values'))) {
      for (const column of schema.columns.get(table) ?? []) {
        explicit.add(column);
        uses.push({ table, column, kind: 'insert' });
      }
    }
    for (const column of schema.defaults.get(table) ?? []) {
      if (!explicit.has(column)) uses.push({ table, column, kind: 'default' });
    }
  });

  // SET targets of UPDATE and of an INSERT's DO UPDATE.
  tokens.forEach((t, i) => {
    if (!isWord(t, 'set')) return;
    const at = scopeOf[i] as Scope;
    const doUpdate = isWord(tokens[i - 1], 'update') && isWord(tokens[i - 2], 'do');
    const table =
      doUpdate ||
      isWord(tokens[i - 2], 'update') ||
      isWord(tokens[i - 3], 'update') ||
      isWord(tokens[i - 4], 'update')
        ? at.target
        : null;
    if (table === null) return;
    let j = i + 1;
    for (;;) {
      if (isPunct(tokens[j], '(')) {
        for (j += 1; j < tokens.length && !isPunct(tokens[j], ')'); j += 1) {
          const col = tokens[j];
          if (col?.kind === 'word') {
            skip.add(j);
            uses.push({ table, column: col.text, kind: 'set' });
          }
        }
      } else {
        const col = tokens[j];
        if (col?.kind !== 'word') return;
        skip.add(j);
        uses.push({ table, column: col.qualifier ?? col.text, kind: 'set' });
      }
      while (j < tokens.length && !isPunct(tokens[j], '=')) j += 1;
      let depth = 0;
      for (j += 1; j < tokens.length; j += 1) {
        const e = tokens[j];
        if (isPunct(e, '(')) depth += 1;
        if (isPunct(e, ')')) depth -= 1;
        if (depth < 0 || (depth === 0 && isWord(e) && SET_ENDS.has(e.text))) return;
        if (depth === 0 && isPunct(e, ',')) break;
      }
      if (j >= tokens.length) return;
      j += 1;
    }
  });

  // Everything else that names a column reads it.
  const visible = (i: number): string[][] => {
    const levels: string[][] = [];
    const at = scopeOf[i] as Scope;
    if (targetOnly[i] === true && at.target !== null) levels.push([at.target]);
    for (let s: Scope | null = at; s !== null; s = s.parent) levels.push([...s.tables]);
    return levels;
  };
  const aliasOf = (i: number, name: string): string | null => {
    for (let s: Scope | null = scopeOf[i] as Scope; s !== null; s = s.parent) {
      const table = s.aliases.get(name);
      if (table !== undefined) return table;
    }
    return schema.columns.has(name) ? name : null;
  };
  const readBare = (i: number, column: string): void => {
    // The innermost level whose tables have the column; outer levels serve correlated
    // sub-selects. None: a statement that names no table at all (its FROM hidden in an
    // unresolved interpolation) may read it anywhere; one over catalogs or CTEs reads theirs.
    const level = visible(i).find((tables) => tables.some((t) => schema.has(t, column)));
    const owners =
      level?.filter((t) => schema.has(t, column)) ??
      (namesSomeTable ? [] : schema.tablesWith(column));
    for (const table of owners) uses.push({ table, column, kind: 'read' });
  };
  tokens.forEach((t, i) => {
    if (skip.has(i)) return;
    const prev = tokens[i - 1];
    if (t.kind === 'star') {
      const inList =
        t.qualifier !== null ||
        isPunct(prev, ',') ||
        (isWord(prev) && ['select', 'returning', 'distinct'].includes(prev.text));
      if (!inList) return;
      const named = t.qualifier === null ? null : aliasOf(i, t.qualifier);
      const of = named !== null ? [named] : t.qualifier === null ? (visible(i)[0] ?? []) : [];
      for (const table of of) {
        for (const column of schema.columns.get(table) ?? []) {
          uses.push({ table, column, kind: 'read' });
        }
      }
      return;
    }
    if (t.kind !== 'word') return;
    if (isPunct(tokens[i + 1], '(') || isPunct(prev, '::') || isWord(prev, 'as')) return;
    if (t.qualifier === 'excluded') return;
    if (t.qualifier !== null) {
      const table = aliasOf(i, t.qualifier);
      if (table !== null) {
        if (schema.has(table, t.text)) uses.push({ table, column: t.text, kind: 'read' });
        return;
      }
    }
    readBare(i, t.text);
  });
  return uses;
}

/** Every column use in the given SQL literals. */
export function columnUses(literals: readonly SqlLiteral[], schema: Schema): ColumnUse[] {
  return literals.flatMap((lit) =>
    splitStatements(lex(lit.sql)).flatMap((stmt) =>
      statementUses(stmt, schema).map((u) => ({ ...u, file: lit.file, line: lit.line })),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Verdict
// ---------------------------------------------------------------------------------------------

export interface InertReport {
  /** `table.column: written at …; read by no query`, one line per inert column not allowlisted. */
  inert: string[];
  /** Allowlist entries that name no column, a column never written, or one that is read. */
  staleAllowlist: string[];
  /** Tables the analyser saw no statement write (a dead table, or an analyser gone blind). */
  unwrittenTables: string[];
}

const keyOf = (u: { table: string; column: string }): string => `${u.table}.${u.column}`;
const site = (u: ColumnUse): string => `${u.file}:${u.line} (${u.kind})`;

function sites(uses: readonly ColumnUse[]): string {
  return [...new Set(uses.map(site))].join(', ');
}

export function inertReport(
  schema: Schema,
  uses: readonly ColumnUse[],
  allowlist: Readonly<Record<string, string>>,
): InertReport {
  const writes = new Map<string, ColumnUse[]>();
  const reads = new Map<string, ColumnUse[]>();
  for (const u of uses) {
    if (!schema.has(u.table, u.column)) continue;
    const into = u.kind === 'read' ? reads : writes;
    into.set(keyOf(u), [...(into.get(keyOf(u)) ?? []), u]);
  }
  const inert: string[] = [];
  for (const c of schema.list) {
    const key = keyOf(c);
    const written = writes.get(key);
    if (written === undefined || reads.has(key) || key in allowlist) continue;
    inert.push(`${key}: written at ${sites(written)}; read by no query`);
  }
  const staleAllowlist: string[] = [];
  for (const [key, reason] of Object.entries(allowlist)) {
    const [table = '', column = ''] = key.split('.');
    if (reason.trim() === '') staleAllowlist.push(`${key}: the entry gives no reason`);
    if (!schema.has(table, column)) staleAllowlist.push(`${key}: no such column`);
    else if (reads.has(key)) staleAllowlist.push(`${key}: read at ${sites(reads.get(key) ?? [])}`);
    else if (!writes.has(key)) staleAllowlist.push(`${key}: written by no statement`);
  }
  const written = new Set([...writes.values()].map((u) => (u[0] as ColumnUse).table));
  const unwrittenTables = [...schema.columns.keys()].filter((t) => !written.has(t));
  return { inert, staleAllowlist, unwrittenTables };
}

/** The whole analysis: sources and schema in, verdict out. */
export function analyse(
  sources: readonly SourceText[],
  schema: readonly SchemaColumn[],
  allowlist: Readonly<Record<string, string>> = {},
): InertReport & { literals: SqlLiteral[]; uses: ColumnUse[] } {
  const s = new Schema(schema);
  const literals = sqlLiterals(sources);
  const uses = columnUses(literals, s);
  return { ...inertReport(s, uses, allowlist), literals, uses };
}
