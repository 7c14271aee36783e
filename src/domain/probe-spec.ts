import { EngineError } from './errors.js';
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
  if (value.length > MAX_TEXT) throw bad(`${what} is longer than ${MAX_TEXT} characters`);
  // PostgreSQL text and jsonb cannot hold NUL; a needle with one could never be recorded.
  if (value.includes('\u0000')) throw bad(`${what} contains a NUL character`);
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw bad(`${what} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
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
 * One statement that reads: `SELECT`, `WITH`, `VALUES` or `TABLE`. A second statement could end
 * the read-only transaction, and commands such as COPY … TO PROGRAM act outside the database.
 */
function readQuery(value: unknown): string {
  const query = text(value, 'query').trim().replace(/;\s*$/, '');
  if (query.includes(';')) throw bad('query must be a single statement (no ";")');
  if (!['select', 'with', 'values', 'table'].includes(leadingKeyword(query))) {
    throw bad('query must be one SELECT, WITH, VALUES or TABLE statement');
  }
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
