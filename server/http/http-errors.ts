import { EngineError } from '../../src/index.js';
import { codedError, ServerError, type FaceErrorCode } from '../server-errors.js';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import { oneLine, shownInline } from '../../src/rules.js';

/**
 * The one place the HTTP API turns a failure into a response: `{"error":{"code","message"}}` with
 * the status its code maps to. Every other file throws (an EngineError, or anything else, which
 * is INTERNAL here and never shows its message, stack or SQL).
 */
const STATUS: Readonly<Record<FaceErrorCode, ContentfulStatusCode>> = {
  INVALID_ARGUMENT: 400,
  UNKNOWN_ROLE: 400,
  EMPTY_TEXT: 400,
  SESSION_REQUIRED: 400,
  RECEIPT_CONFLICT: 400,
  RECEIPT_NOT_ALLOWED: 400,
  UNKNOWN_SLOT_RULE: 400,
  POLARITY_NOT_DISTINCT: 400,
  UNKNOWN_INSTRUMENT: 400,
  NO_EMBEDDER: 400,
  INVALID_JSON: 400,
  TOKEN_REQUIRED: 401,
  TOKEN_INVALID: 401,
  TOKEN_REVOKED: 401,
  ROLE_FORBIDDEN: 403,
  HOST_NOT_ALLOWED: 403,
  CSRF_INVALID: 403,
  REVIEW_LOCKED: 401,
  CONFIRMATION_REQUIRED: 400,
  UNLOCK_THROTTLED: 429,
  REMOTE_NOT_ALLOWED: 403,
  SESSION_NOT_FOUND: 404,
  SUBJECT_NOT_FOUND: 404,
  PROPOSAL_NOT_FOUND: 404,
  SLOT_NOT_FOUND: 404,
  RETRACTION_NOT_FOUND: 404,
  FACT_NOT_FOUND: 404,
  PROBE_RECORD_NOT_FOUND: 404,
  COMMITMENT_NOT_FOUND: 404,
  MANIFEST_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  SESSION_EXISTS: 409,
  NEWER_VALUE_LIVE: 409,
  NOT_PENDING: 409,
  FACT_NOT_LIVE: 409,
  ALREADY_SETTLED: 409,
  RETRACTION_CHANGED: 409,
  FORGET_CITED: 409,
  NO_RETENTION_RULE: 409,
  NOTHING_TO_FORGET: 409,
  EXPORT_UNREADABLE: 400,
  EXPORT_DIGEST_MISMATCH: 400,
  EXPORT_INVALID: 400,
  SUBJECT_NOT_EMPTY: 409,
  STORE_NOT_EMPTY: 409,
  FORGET_REQUEST_NOT_FOUND: 404,
  EDIT_DROPPED: 422,
  NOT_DUE: 409,
  NO_PROBE: 409,
  INSTRUMENT_NOT_CALIBRATED: 409,
  PROBE_INCONCLUSIVE: 409,
  COMMITMENT_NOT_OPEN: 409,
  BLOCK_EXISTS: 409,
  SLOT_IN_USE: 409,
  CHAIN_BROKEN: 409,
  NO_OWNER_KEY: 409,
  WRONG_KEY: 409,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_ENCODING: 415,
  EMBEDDER_FAILED: 502,
  LLM_FAILED: 502,
  REFLECTION_IN_PROGRESS: 409,
  SUMMARY_IN_PROGRESS: 409,
  LLM_NOT_CONFIGURED: 503,
  ENGINE_CLOSED: 503,
  STORE_LOCKED: 503,
  HOST_LOST: 503,
  // the server's own set-up, not the caller's doing: the message stays in the server
  DB_UNUSABLE: 500,
  NOT_INITIALIZED: 500,
  HOST_REFUSED: 500,
  STORE_TOO_NEW: 500,
  MIGRATION_MISMATCH: 500,
  REINDEX_REQUIRED: 500,
  STORE_ERROR: 500,
  BAD_PASSPHRASE: 500,
  KEY_UNREADABLE: 500,
  PASSPHRASE_REQUIRED: 500,
  PROBE_ROLE_MISSING: 500,
  NOTIFY_HOST_NOT_ALLOWED: 500,
  NOTIFY_FAILED: 500,
  INTERNAL: 500,
};

/** Codes whose message may name server paths, hosts or SQL: the caller gets this instead. */
const WITHHELD: Readonly<Partial<Record<FaceErrorCode, string>>> = {
  ENGINE_CLOSED: 'the server is shutting down',
  STORE_LOCKED: 'the store is busy in another process',
  HOST_LOST: 'the store host went away; try again',
  EMBEDDER_FAILED: 'the embedder failed',
  LLM_FAILED: 'the model call failed (the server log has the detail)',
  LLM_NOT_CONFIGURED:
    'this server has no model configured (memledger serve --llm-url, --llm-model)',
};

const MAX_MESSAGE = 1_000;

/** The HTTP status an error code (the engine's or a face's) answers with. */
export function httpStatus(code: FaceErrorCode): ContentfulStatusCode {
  return STATUS[code];
}

/** Where a failure that is not the caller's doing is reported (default: stderr). */
export type InternalErrorReporter = (err: unknown) => void;

function publicError(err: unknown): { code: FaceErrorCode; message: string; status: number } {
  const coded = codedError(err);
  if (coded !== null) {
    const status = STATUS[coded.code];
    const message =
      status >= 500
        ? (WITHHELD[coded.code] ?? 'internal error: see the server log')
        : coded.message;
    // a message may quote the caller's strings: on one line, receipt markers defanged
    return { code: coded.code, message: shownInline(message).slice(0, MAX_MESSAGE), status };
  }
  if (err instanceof HTTPException) return fromHttpException(err);
  return { code: 'INTERNAL', message: 'internal error: see the server log', status: 500 };
}

/** What Hono itself throws: an unparsable body, an unsupported media type, a size limit. */
function fromHttpException(err: HTTPException): {
  code: FaceErrorCode;
  message: string;
  status: number;
} {
  switch (err.status) {
    case 400:
    case 415:
      return {
        code: 'INVALID_JSON',
        message: 'the body must be JSON, sent with Content-Type: application/json',
        status: 400,
      };
    case 413:
      return { code: 'BODY_TOO_LARGE', message: 'the body is too large', status: 413 };
    case 404:
      return { code: 'ROUTE_NOT_FOUND', message: 'no such route', status: 404 };
    default:
      return err.status < 500
        ? { code: 'INVALID_ARGUMENT', message: 'the request was refused', status: 400 }
        : { code: 'INTERNAL', message: 'internal error: see the server log', status: 500 };
  }
}

/** The response for any failure; 401s carry `WWW-Authenticate: Bearer`. */
export function errorResponse(c: Context, err: unknown, report: InternalErrorReporter): Response {
  const { code, message, status } = publicError(err);
  if (status >= 500) report(err);
  if (status === 401) c.header('WWW-Authenticate', 'Bearer realm="memledger"');
  // The rest of a body too large is not read: the connection ends with the answer, so a client's
  // next request goes on a new one (on this one it would be reset).
  if (status === 413) c.header('Connection', 'close');
  return c.json({ error: { code, message } }, status as ContentfulStatusCode);
}

/** An unknown path or method. */
export function routeNotFound(c: Context): Response {
  return c.json(
    {
      error: { code: 'ROUTE_NOT_FOUND', message: `no route ${c.req.method} ${shown(c.req.path)}` },
    },
    404,
  );
}

/** A body over the limit (hono/body-limit's onError). */
export function bodyTooLarge(limit: number): never {
  throw new ServerError('BODY_TOO_LARGE', `the body is larger than ${limit} bytes`, {
    data: { limit },
  });
}

/** A body that is not UTF-8 JSON. */
export function invalidJson(message: string): ServerError {
  return new ServerError('INVALID_JSON', message);
}

/**
 * A body sent with a content coding (gzip, br, …): the server decodes none, and reading the
 * coded bytes as if they were plain would act on something the sender did not send.
 */
export function unsupportedEncoding(): ServerError {
  return new ServerError(
    'UNSUPPORTED_ENCODING',
    'the body must be sent without a Content-Encoding (or with identity): the server decodes none',
  );
}

/**
 * Refuses a request whose `Content-Encoding` is anything but absent or `identity` (each coding of
 * a list), with UNSUPPORTED_ENCODING (HTTP 415).
 */
export function requireIdentityEncoding(header: string | undefined): void {
  if (header === undefined || header.trim() === '') return;
  const codings = header.split(',').map((c) => c.trim().toLowerCase());
  if (!codings.every((c) => c === 'identity')) throw unsupportedEncoding();
}

/** A caller's string, shown safely inside a message: bounded, one line, no controls. */
function shown(value: string): string {
  const flat = oneLine(value);
  return flat.length > 64 ? `${flat.slice(0, 64)}…` : flat;
}

const WHERE: Readonly<Record<string, string>> = { json: 'body', param: 'path', query: 'query' };

/**
 * The validation hook of every route (OpenAPIHono's `defaultHook`): the first problem becomes
 * INVALID_ARGUMENT naming the field, in the message and in `data.field`. Values are never
 * echoed, only field names, bounded.
 */
export function validationHook(
  result: { success: true } | { success: false; error: ZodError; target: string },
): void {
  if (result.success) return;
  const issue = result.error.issues[0];
  const where = WHERE[result.target] ?? result.target;
  const path = (issue?.path ?? []).map((p) => shown(typeof p === 'symbol' ? '?' : String(p)));
  if (issue?.code === 'unrecognized_keys') path.push(shown(issue.keys[0] ?? ''));
  const field = path.join('.');
  const raw =
    issue?.code === 'unrecognized_keys' ? 'unknown field' : (issue?.message ?? 'is invalid');
  const message = raw.charAt(0).toLowerCase() + raw.slice(1);
  throw new EngineError(
    'INVALID_ARGUMENT',
    `${field === '' ? where : `${where}.${field}`}: ${message}`,
    {
      data: { field: field === '' ? where : field },
    },
  );
}
