import { EngineError } from '../domain/errors.js';
import { FACT_STATUSES, type FactStatus } from '../domain/fact.js';
import { requireId } from '../domain/turn.js';
import { DEFAULT_RANK_PARAMS, type RankParams } from './lexical-rank.js';
import { RECALL_KINDS, type RecallKind, type RecallOptions } from './recall-types.js';

const MAX_K = 200;
const DEFAULT_K = 10;

/** Ranking parameters that count things (documents, terms, sessions, postings). */
const COUNT_PARAMS: ReadonlySet<string> = new Set([
  'feedbackDocs',
  'feedbackTerms',
  'boostPool',
  'postingBudget',
  'candidateSessions',
]);

/** One recall's query and options, checked and with their defaults filled in. */
export interface RecallPlan {
  k: number;
  kinds: Set<RecallKind>;
  /** The session to stay inside, or null for all the subject's sessions. */
  session: string | null;
  /** The ranking parameters: the defaults, overridden by the call's. */
  params: RankParams;
  /** The fact statuses wanted: live only, or every status with `includeHistory`. */
  statuses: readonly FactStatus[];
}

/**
 * Checks a recall's query and options (EMPTY_TEXT, INVALID_ARGUMENT or SESSION_REQUIRED, naming
 * the field), before anything is read.
 */
export function parseRecallOptions(query: unknown, options: RecallOptions): RecallPlan {
  if (typeof query !== 'string' || query.trim() === '') {
    throw new EngineError('EMPTY_TEXT', 'a recall query is required');
  }
  if (options.vectors !== undefined && typeof options.vectors !== 'boolean') {
    throw new EngineError('INVALID_ARGUMENT', 'vectors must be true or false');
  }
  const k = options.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) {
    throw new EngineError('INVALID_ARGUMENT', `k must be a whole number from 1 to ${MAX_K}`);
  }
  const kinds = new Set(options.kinds ?? RECALL_KINDS);
  for (const kind of kinds) {
    if (!RECALL_KINDS.includes(kind)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `unknown kind "${String(kind)}": use ${RECALL_KINDS.join(' or ')}`,
      );
    }
  }
  if (kinds.size === 0) throw new EngineError('INVALID_ARGUMENT', 'kinds cannot be empty');
  const session = options.session === undefined ? null : requireId(options.session, 'session');
  for (const [name, value] of Object.entries(options.params ?? {})) {
    if (!(name in DEFAULT_RANK_PARAMS)) {
      throw new EngineError('INVALID_ARGUMENT', `unknown ranking parameter "${name}"`);
    }
    const whole = COUNT_PARAMS.has(name);
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < 0 ||
      (whole && !Number.isInteger(value))
    ) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `ranking parameter ${name} must be a ${whole ? 'whole ' : ''}number of at least 0`,
      );
    }
  }
  return {
    k,
    kinds,
    session,
    params: { ...DEFAULT_RANK_PARAMS, ...options.params },
    statuses: options.includeHistory === true ? FACT_STATUSES : ['active'],
  };
}
