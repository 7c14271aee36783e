import { isEngineError, type ErrorCode } from '../src/domain/errors.js';

/**
 * Codes only the faces raise (the HTTP API, MCP, the review page and its notifier), never the
 * engine: documented in docs/ERRORS.md, section Servers.
 */
export const SERVER_ERROR_CODES = [
  'TOKEN_REQUIRED',
  'ROLE_FORBIDDEN',
  'ROUTE_NOT_FOUND',
  'BODY_TOO_LARGE',
  'INVALID_JSON',
  'HOST_NOT_ALLOWED',
  'REMOTE_NOT_ALLOWED',
  'UNSUPPORTED_ENCODING',
  'REVIEW_LOCKED',
  'CSRF_INVALID',
  'CONFIRMATION_REQUIRED',
  'UNLOCK_THROTTLED',
  'NOTIFY_HOST_NOT_ALLOWED',
  'NOTIFY_FAILED',
] as const;
/** A code only the faces raise. */
export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[number];
/** A code a face answers with: the engine's, or one of the faces' own. */
export type FaceErrorCode = ErrorCode | ServerErrorCode;

/** A refusal by a face itself, answered exactly like an engine error. */
export class ServerError extends Error {
  readonly code: ServerErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: ServerErrorCode,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServerError';
    this.code = code;
    this.data = options.data;
  }
}

/** A failure that carries a documented code (the engine's or a face's); null for anything else. */
export function codedError(
  err: unknown,
): { code: FaceErrorCode; message: string; data: Record<string, unknown> | undefined } | null {
  return isEngineError(err) || err instanceof ServerError ? err : null;
}
