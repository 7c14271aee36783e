import { EngineError } from './errors.js';

/**
 * The bounds every input is held to, in one place. Anything outside them is refused as a clear
 * error (INVALID_ARGUMENT for a call's own arguments, INVALID_PROPOSAL for one proposal of a
 * batch) before the store sees it: PostgreSQL text cannot hold NUL or a lone surrogate, its
 * integer stops at 2^31 - 1, its dates at years 4713 BC and 294276 AD, and an unbounded field
 * would make every later read pay for it. Lengths count UTF-16 code units (JavaScript's
 * `length`).
 */
export const INPUT_LIMITS = {
  /** A whole number the store keeps as a PostgreSQL `integer` (evidence.turn, seqs, limits). */
  maxInt: 2_147_483_647,
  /** A subject or session id (letters, digits and `_ . : @ -`). */
  idLength: 128,
  /** A turn's text. */
  turnLength: 1_000_000,
  /** A free-text field of a call: a retraction's claim, a note, a title, a purpose, a tag. */
  fieldLength: 16_384,
  /** A proposal's evidence.quote. */
  quoteLength: 16_384,
  /** A tool name or source, in a receipt or a proposal's evidence.tool. */
  toolLength: 2_048,
  /** A proposal's slot (slot names are at most 64 characters). */
  slotLength: 64,
  /** A proposal's key. */
  keyLength: 256,
  /** A list argument (tags). */
  listItems: 1_000,
  /** How deeply a proposal, or a response's content blocks, may nest objects and lists. */
  depth: 32,
  /** How many values (objects, lists and scalars, counted) one proposal may hold. */
  values: 10_000,
  /** Dates: the years 1 to 9999, which both JavaScript and PostgreSQL read the same way. */
  minYear: 1,
  maxYear: 9999,
} as const;

/**
 * Runtime guards for fields of an input, for JavaScript callers (and the faces that pass on what
 * they are sent): a wrong type is INVALID_ARGUMENT naming the field, in `data.field` too.
 */
export function invalidField(field: string, message: string): EngineError {
  return new EngineError('INVALID_ARGUMENT', `${field} ${message}`, { data: { field } });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string holds half of a UTF-16 surrogate pair on its own (not valid Unicode). */
export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/**
 * The one rule for every string the store keeps: no NUL (PostgreSQL text cannot hold it), no
 * lone surrogate (UTF-8 cannot encode it; it would be stored altered or refused), at most
 * `maxLength` code units. Returns what is wrong, or null.
 */
export function stringProblem(value: string, maxLength: number): string | null {
  if (value.length > maxLength) return `is longer than ${maxLength} characters`;
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (hasLoneSurrogate(value)) return 'contains a lone surrogate (not valid Unicode)';
  return null;
}

/** `value` when it meets `stringProblem`'s rule; INVALID_ARGUMENT naming the field otherwise. */
export function checkString(value: string, field: string, maxLength: number): string {
  const problem = stringProblem(value, maxLength);
  if (problem !== null) throw invalidField(field, problem);
  return value;
}

/** What is wrong with a date the store must keep (invalid, or outside years 1 to 9999), or null. */
export function dateProblem(value: Date): string | null {
  const t = value.getTime();
  if (Number.isNaN(t)) return 'is not a valid date';
  const year = value.getUTCFullYear();
  if (year < INPUT_LIMITS.minYear || year > INPUT_LIMITS.maxYear) {
    return `is outside the years ${INPUT_LIMITS.minYear} to ${INPUT_LIMITS.maxYear}`;
  }
  return null;
}

/** A string (no NUL, no lone surrogate, at most `maxLength`), or absent (undefined). */
export function optionalString(
  value: unknown,
  field: string,
  maxLength: number = INPUT_LIMITS.fieldLength,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidField(field, 'must be a string');
  return checkString(value, field, maxLength);
}

/** true, false, or absent. */
export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidField(field, 'must be true or false');
  return value;
}

/** A valid Date in the years 1 to 9999, or absent. */
export function optionalDate(value: unknown, field: string): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date)) throw invalidField(field, 'must be a valid Date');
  const problem = dateProblem(value);
  if (problem !== null) throw invalidField(field, `must be a valid Date: it ${problem}`);
  return value;
}

/** A list of at most `listItems` strings, each meeting `stringProblem`'s rule, or absent. */
export function optionalStringList(
  value: unknown,
  field: string,
  maxLength: number = INPUT_LIMITS.fieldLength,
): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw invalidField(field, 'must be a list of strings');
  }
  if (value.length > INPUT_LIMITS.listItems) {
    throw invalidField(field, `must have at most ${INPUT_LIMITS.listItems} items`);
  }
  value.forEach((v: string, i) => checkString(v, `${field}[${i}]`, maxLength));
  return value as string[];
}

/** A whole number from `min` to `max` (default 2^31 - 1), or absent. */
export function optionalWhole(
  value: unknown,
  field: string,
  min: number,
  max: number = INPUT_LIMITS.maxInt,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidField(field, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** The most rows one page of a list may hold. */
export const MAX_PAGE = 1000;

/**
 * The one paging shape of every list of the API: `limit` 1 to 1000 (each list's default is in
 * its doc), `offset` how many to skip (default 0).
 */
export interface PageOptions {
  limit?: number;
  offset?: number;
}

/**
 * One page of a list: `limit` a whole number from 1 to `MAX_PAGE` (default `fallback`), `offset`
 * a whole number of at least 0 (default 0); INVALID_ARGUMENT naming the field otherwise.
 */
export function pageOf(
  options: { limit?: unknown; offset?: unknown },
  fallback: number,
): { limit: number; offset: number } {
  return {
    limit: optionalWhole(options.limit, 'limit', 1, MAX_PAGE) ?? fallback,
    offset: optionalWhole(options.offset, 'offset', 0) ?? 0,
  };
}

/** A plain object (not null, not a list), or absent. */
export function optionalObject(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidField(field, 'must be an object');
  }
  return value as Record<string, unknown>;
}

/**
 * What keeps a value from being plain JSON-like data of bounded size, or null: a cycle, nesting
 * deeper than `depth`, more than `values` values, or a BigInt, symbol or function anywhere.
 * Iterative, so a 100,000-deep value is refused rather than overflowing the stack; it stops at
 * the first problem, so its work is bounded by `values`.
 */
export function structureProblem(
  root: unknown,
  limits: { depth: number; values: number } = INPUT_LIMITS,
): string | null {
  let seen = 0;
  const onPath = new Set<object>();
  // Each frame is a container on the current path and its children still to visit.
  const stack: Array<{ node: object; children: unknown[] }> = [];
  const visit = (value: unknown): string | null => {
    seen += 1;
    if (seen > limits.values) return `holds more than ${limits.values} values`;
    if (typeof value === 'bigint') return 'holds a BigInt, which is not JSON';
    if (typeof value === 'symbol' || typeof value === 'function') {
      return `holds a ${typeof value}, which is not JSON`;
    }
    if (typeof value !== 'object' || value === null) return null;
    if (onPath.has(value)) return 'refers to itself (a cycle)';
    if (onPath.size >= limits.depth) return `nests deeper than ${limits.depth} levels`;
    let children: unknown[];
    try {
      children = Array.isArray(value) ? [...(value as unknown[])] : Object.values(value);
    } catch {
      return 'cannot be read (a property threw)';
    }
    onPath.add(value);
    stack.push({ node: value, children: children.reverse() });
    return null;
  };
  const first = visit(root);
  if (first !== null) return first;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top === undefined) break;
    if (top.children.length === 0) {
      stack.pop();
      onPath.delete(top.node);
      continue;
    }
    const problem = visit(top.children.pop());
    if (problem !== null) return problem;
  }
  return null;
}
