import { EngineError } from './errors.js';
import { stringProblem } from './input.js';
import {
  COMPARE_OPS,
  FILE_PROBE_MODES,
  PROBE_KINDS,
  type CompareOp,
  type FileProbeMode,
  type ProbeSpec,
} from './probe.js';

const MAX_TEXT = 10_000;
const KEYS: Record<ProbeSpec['kind'], readonly string[]> = {
  file: ['kind', 'path', 'mode', 'needle', 'negate'],
  sql: ['kind', 'query', 'op', 'expect'],
  http: ['kind', 'url', 'status', 'contains'],
};

function bad(message: string): EngineError {
  return new EngineError('INVALID_ARGUMENT', `probe spec: ${message}`);
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw bad(`${what} must be a non-empty string`);
  // PostgreSQL text and jsonb cannot hold NUL or a lone surrogate: such a spec could never be
  // recorded with its verdict.
  const problem = stringProblem(value, MAX_TEXT);
  if (problem !== null) throw bad(`${what} ${problem}`);
  return value;
}

/** A value as an error message shows it: a short quoted string, or its type (never throws). */
function shown(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw bad(`${what} must be one of ${allowed.join(', ')}, not ${shown(value)}`);
  }
  return value as T;
}

/** Strips leading comments and parentheses, so the first keyword is what will run. */
function leadingKeyword(query: string): string {
  let rest = query;
  for (;;) {
    const next = rest.replace(/^(\s+|\(|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)/, '');
    if (next === rest) break;
    rest = next;
  }
  return (/^[a-z]+/i.exec(rest)?.[0] ?? '').toLowerCase();
}

/**
 * Functions an sql probe may not call (`*` ends a family), though it runs read-only and is rolled
 * back: a session advisory lock outlives the rollback on a pooled connection and blocks every
 * later decision; the others read or list server files, open other connections, signal other
 * backends, sleep, change settings, notify listeners, or run SQL given as a string (which would
 * get past this list).
 */
export const DENIED_SQL_FUNCTIONS: readonly string[] = [
  'pg_advisory_*',
  'pg_try_advisory_*',
  'pg_read_file',
  'pg_read_binary_file',
  'pg_stat_file',
  'pg_ls_*',
  'pg_file_*',
  'lo_*',
  'dblink*',
  'pg_sleep*',
  'pg_terminate_backend',
  'pg_cancel_backend',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'set_config',
  'pg_notify',
  'query_to_xml*',
  'ts_stat',
  'ts_rewrite',
  // callable by any role, and the WAL record it writes outlives the rolled-back transaction
  'pg_logical_emit_message',
];

/** Characters that continue an SQL identifier (PostgreSQL counts every non-ASCII one). */
const IDENT_CHAR = 'A-Za-z0-9_$\\u0080-\\uffff';
/**
 * A denied name as a whole identifier, in any case, bare, quoted or schema-qualified. Matched
 * over the whole text, string literals and comments included: a string can be handed to a
 * function that runs it.
 */
const DENIED_CALL = new RegExp(
  `(?<![${IDENT_CHAR}])(?:${DENIED_SQL_FUNCTIONS.map((name) =>
    name.replace('*', `[${IDENT_CHAR}]*`),
  ).join('|')})(?![${IDENT_CHAR}])`,
  'i',
);

/**
 * One statement that reads: `SELECT`, `WITH`, `VALUES` or `TABLE`. A second statement could end
 * the read-only transaction, and commands such as COPY … TO PROGRAM act outside the database. It
 * may not name a denied function, nor use a Unicode-escaped identifier (`U&"…"`), which could
 * spell one.
 */
function readQuery(value: unknown): string {
  const query = text(value, 'query').trim().replace(/;\s*$/, '');
  if (query.includes(';')) throw bad('query must be a single statement (no ";")');
  if (!['select', 'with', 'values', 'table'].includes(leadingKeyword(query))) {
    throw bad('query must be one SELECT, WITH, VALUES or TABLE statement');
  }
  const denied = DENIED_CALL.exec(query);
  if (denied !== null) throw bad(`query names ${denied[0]}, which a probe may not call`);
  if (/u&"/i.test(query)) throw bad('query must not use Unicode-escaped identifiers (U&"…")');
  return query;
}

function httpUrl(value: unknown): string {
  const raw = text(value, 'url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad(`url is not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw bad(`url must be http: or https:, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') throw bad('url must not carry credentials');
  return url.toString();
}

/**
 * Validates a probe spec strictly (unknown keys, missing or stray fields are refused with
 * INVALID_ARGUMENT) and returns it normalised: a `contains` spec always states `negate`.
 */
export function parseProbeSpec(raw: unknown): ProbeSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw bad('must be an object with a "kind"');
  }
  const o = raw as Record<string, unknown>;
  const kind = oneOf(o.kind, PROBE_KINDS, 'kind');
  const stray = Object.keys(o).filter((k) => !KEYS[kind].includes(k));
  if (stray.length > 0) throw bad(`unknown field(s) for a ${kind} probe: ${stray.join(', ')}`);
  switch (kind) {
    case 'file': {
      const path = text(o.path, 'path');
      const mode: FileProbeMode = oneOf(o.mode, FILE_PROBE_MODES, 'mode');
      if (mode !== 'contains') {
        if (o.needle !== undefined) throw bad(`needle is only for mode "contains", not "${mode}"`);
        if (o.negate !== undefined) throw bad(`negate is only for mode "contains", not "${mode}"`);
        return { kind, path, mode };
      }
      const needle = text(o.needle, 'needle');
      if (o.negate !== undefined && typeof o.negate !== 'boolean') {
        throw bad('negate must be true or false');
      }
      return { kind, path, mode, needle, negate: o.negate === true };
    }
    case 'sql': {
      const query = readQuery(o.query);
      const op: CompareOp = oneOf(o.op, COMPARE_OPS, 'op');
      if (typeof o.expect !== 'number' || !Number.isFinite(o.expect)) {
        throw bad('expect must be a finite number');
      }
      return { kind, query, op, expect: o.expect };
    }
    case 'http': {
      const url = httpUrl(o.url);
      if (o.status === undefined && o.contains === undefined) {
        throw bad('an http probe states a status, a needle to contain, or both');
      }
      const spec: ProbeSpec = { kind, url };
      if (o.status !== undefined) {
        if (typeof o.status !== 'number' || !Number.isInteger(o.status)) {
          throw bad('status must be a whole number');
        }
        if (o.status < 100 || o.status > 599) throw bad('status must be between 100 and 599');
        spec.status = o.status;
      }
      if (o.contains !== undefined) spec.contains = text(o.contains, 'contains');
      return spec;
    }
  }
}
