/**
 * Every real failure the engine reports carries one of these codes. Expected outcomes (a gate
 * drop, a probe verdict) are values, not errors. Each code is documented in docs/ERRORS.md. The
 * faces' own codes (a body too large, a role that may not run an operation…) are theirs
 * (server/server-errors.ts), and the CLI's are its own (cli/errors.ts).
 */
export const ERROR_CODES = [
  'INVALID_ARGUMENT',
  'UNKNOWN_ROLE',
  'EMPTY_TEXT',
  'SESSION_REQUIRED',
  'SESSION_NOT_FOUND',
  'SESSION_EXISTS',
  'SUBJECT_NOT_FOUND',
  'RECEIPT_CONFLICT',
  'RECEIPT_NOT_ALLOWED',
  'DB_UNUSABLE',
  'NOT_INITIALIZED',
  'STORE_LOCKED',
  'HOST_REFUSED',
  'HOST_LOST',
  'STORE_TOO_NEW',
  'MIGRATION_MISMATCH',
  'REINDEX_REQUIRED',
  'STORE_ERROR',
  'ENGINE_CLOSED',
  'CHAIN_BROKEN',
  'BAD_PASSPHRASE',
  'KEY_UNREADABLE',
  'PASSPHRASE_REQUIRED',
  'PROPOSAL_NOT_FOUND',
  'NEWER_VALUE_LIVE',
  'SLOT_NOT_FOUND',
  'NOT_PENDING',
  'NO_OWNER_KEY',
  'WRONG_KEY',
  'UNKNOWN_SLOT_RULE',
  'POLARITY_NOT_DISTINCT',
  'RETRACTION_NOT_FOUND',
  'RETRACTION_CHANGED',
  'FORGET_CITED',
  'NO_RETENTION_RULE',
  'NOTHING_TO_FORGET',
  'EXPORT_UNREADABLE',
  'EXPORT_DIGEST_MISMATCH',
  'EXPORT_INVALID',
  'SUBJECT_NOT_EMPTY',
  'STORE_NOT_EMPTY',
  'FORGET_REQUEST_NOT_FOUND',
  'EDIT_DROPPED',
  'FACT_NOT_FOUND',
  'PROBE_RECORD_NOT_FOUND',
  'FACT_NOT_LIVE',
  'ALREADY_SETTLED',
  'NOT_DUE',
  'NO_PROBE',
  'INSTRUMENT_NOT_CALIBRATED',
  'PROBE_INCONCLUSIVE',
  'UNKNOWN_INSTRUMENT',
  'PROBE_ROLE_MISSING',
  'COMMITMENT_NOT_FOUND',
  'COMMITMENT_NOT_OPEN',
  'MANIFEST_NOT_FOUND',
  'BLOCK_EXISTS',
  'SLOT_IN_USE',
  'EMBEDDER_FAILED',
  'NO_EMBEDDER',
  'TOKEN_INVALID',
  'TOKEN_REVOKED',
  'TOKEN_NOT_FOUND',
  'LLM_NOT_CONFIGURED',
  'LLM_FAILED',
  'REFLECTION_IN_PROGRESS',
  'SUMMARY_IN_PROGRESS',
  'INTERNAL',
] as const;
/** One of `ERROR_CODES`. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Structured detail and the underlying cause of an `EngineError`. */
export interface EngineErrorOptions {
  data?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error class the engine throws: a documented `code`, a message, optional `data`. */
export class EngineError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: EngineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngineError';
    this.code = code;
    this.data = options.data;
  }
}

/** Whether `value` is an `EngineError`. */
export function isEngineError(value: unknown): value is EngineError {
  return value instanceof EngineError;
}
