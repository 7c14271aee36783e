/**
 * Claim probes (seed 000 §6): structured checks whose polarity is explicit in the spec and never
 * read from the wording of an assertion. This file holds the vocabulary and the verdict rules.
 */
export const PROBE_VERDICTS = ['verified', 'verified_missing', 'falsified', 'error'] as const;
/** One of `PROBE_VERDICTS`. */
export type ProbeVerdict = (typeof PROBE_VERDICTS)[number];

/** The kinds of instrument. */
export const PROBE_KINDS = ['file', 'sql', 'http'] as const;
/** One of `PROBE_KINDS`. */
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** What a file probe asserts: the file exists, is missing, or contains a needle. */
export const FILE_PROBE_MODES = ['exists', 'missing', 'contains'] as const;
/** One of `FILE_PROBE_MODES`. */
export type FileProbeMode = (typeof FILE_PROBE_MODES)[number];

/** How a SQL probe compares its number with the expected one. */
export const COMPARE_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
/** One of `COMPARE_OPS`. */
export type CompareOp = (typeof COMPARE_OPS)[number];

/** Why a probe answered `error`: it could not look, so it says nothing about the claim. */
export const PROBE_ERROR_CODES = [
  'PATH_OUTSIDE_ROOTS',
  'FILE_NOT_FOUND',
  'UNREADABLE',
  'TOO_LARGE',
  'READ_ONLY_VIOLATION',
  'QUERY_FAILED',
  'BAD_RESULT',
  'NOT_ALLOWED',
  'CONNECTION_FAILED',
  'TIMEOUT',
  'INSTRUMENT_FAILED',
  'PROBE_ROLE_MISSING',
] as const;
/** One of `PROBE_ERROR_CODES`. */
export type ProbeErrorCode = (typeof PROBE_ERROR_CODES)[number];

/** A file probe: a path inside the allowed roots and what must hold of it. */
export interface FileProbeSpec {
  kind: 'file';
  /** Relative to an allowed root, or absolute inside one. */
  path: string;
  mode: FileProbeMode;
  /** Required for `contains`, refused otherwise. Case-sensitive, counted without overlaps. */
  needle?: string;
  /** Only for `contains`: true asserts the needle is absent. */
  negate?: boolean;
}

/** A SQL probe: one read-only statement whose single number is compared with `expect`. */
export interface SqlProbeSpec {
  kind: 'sql';
  /** One read-only statement returning one row with one numeric column. */
  query: string;
  op: CompareOp;
  expect: number;
}

/** An HTTP probe: a GET on an allowed host, its status and/or a needle in its body. */
export interface HttpProbeSpec {
  kind: 'http';
  url: string;
  /** At least one of `status` and `contains`. */
  status?: number;
  contains?: string;
}

/** Any probe, keyed on `kind`. */
export type ProbeSpec = FileProbeSpec | SqlProbeSpec | HttpProbeSpec;

/**
 * What an instrument reports for one run. `errorCode` goes with an `error` verdict and with no
 * other (an instrument may omit it otherwise; the engine records null).
 */
export interface ProbeOutcome {
  verdict: ProbeVerdict;
  errorCode?: string | null;
  evidence: Record<string, unknown>;
}

/** Occurrences of `needle` in `text`: case-sensitive, non-overlapping; an empty needle counts 0. */
export function countOccurrences(text: string, needle: string): number {
  if (needle === '') return 0;
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    count += 1;
  }
  return count;
}

/** What a file probe saw; `content` only when the mode needs it. */
export type FileObservation = { exists: false } | { exists: true; content: string | null };

/** A file probe's verdict and how many times the needle matched (for `contains`). */
export type FileVerdict =
  | { verdict: 'verified' | 'verified_missing' | 'falsified'; matchCount: number | null }
  | { verdict: 'error'; errorCode: 'FILE_NOT_FOUND' | 'UNREADABLE'; matchCount: null };

/**
 * Seed 000's final fix: the mode and `negate` decide polarity; nothing else does. A `contains`
 * probe on a file that exists but lacks the needle is falsified; on a file that does not exist it
 * is an error (absence of the file is not absence of the needle).
 */
export function fileVerdict(spec: FileProbeSpec, seen: FileObservation): FileVerdict {
  switch (spec.mode) {
    case 'exists':
      return { verdict: seen.exists ? 'verified' : 'falsified', matchCount: null };
    case 'missing':
      return { verdict: seen.exists ? 'falsified' : 'verified_missing', matchCount: null };
    case 'contains': {
      if (!seen.exists) return { verdict: 'error', errorCode: 'FILE_NOT_FOUND', matchCount: null };
      if (seen.content === null) {
        return { verdict: 'error', errorCode: 'UNREADABLE', matchCount: null };
      }
      const matchCount = countOccurrences(seen.content, spec.needle ?? '');
      if (spec.negate === true) {
        return { verdict: matchCount === 0 ? 'verified_missing' : 'falsified', matchCount };
      }
      return { verdict: matchCount > 0 ? 'verified' : 'falsified', matchCount };
    }
  }
}

/** Whether `value op expect` holds. */
export function compareNumbers(value: number, op: CompareOp, expect: number): boolean {
  switch (op) {
    case 'eq':
      return value === expect;
    case 'ne':
      return value !== expect;
    case 'lt':
      return value < expect;
    case 'le':
      return value <= expect;
    case 'gt':
      return value > expect;
    case 'ge':
      return value >= expect;
  }
}

/** A passing SQL probe is `verified`; there is no "missing" side to a number. */
export function sqlVerdict(spec: SqlProbeSpec, value: number): 'verified' | 'falsified' {
  return compareNumbers(value, spec.op, spec.expect) ? 'verified' : 'falsified';
}

/** Every stated expectation must hold: the status when given, and the needle when given. */
export function httpVerdict(
  spec: HttpProbeSpec,
  seen: { status: number; matchCount: number | null },
): 'verified' | 'falsified' {
  if (spec.status !== undefined && seen.status !== spec.status) return 'falsified';
  if (spec.contains !== undefined && (seen.matchCount ?? 0) === 0) return 'falsified';
  return 'verified';
}

/** A calibration passes only when the known-present needle and the known-absent one diverge. */
export function controlsDiverge(positive: ProbeVerdict, negative: ProbeVerdict): boolean {
  return positive === 'verified' && negative === 'falsified';
}
