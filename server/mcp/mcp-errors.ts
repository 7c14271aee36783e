import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
} from '@modelcontextprotocol/server';
import { codedError, type FaceErrorCode } from '../server-errors.js';
import { shownInline } from '../../src/rules.js';

/** Called with a failure that is not an EngineError (a bug), which the client never sees. */
export type InternalErrorSink = (err: unknown) => void;

/** Engine codes that say the caller sent something wrong, answered as JSON-RPC invalid params. */
const CALLER_CODES: ReadonlySet<string> = new Set<FaceErrorCode>([
  'INVALID_ARGUMENT',
  'EMPTY_TEXT',
  'SESSION_REQUIRED',
  'SESSION_NOT_FOUND',
  'MANIFEST_NOT_FOUND',
  'ROLE_FORBIDDEN',
]);

/**
 * The server's own failures, not the caller's doing: their messages may name paths, hosts or
 * SQL, so the client gets the code and a fixed message, and the server log the rest.
 */
const WITHHELD: ReadonlySet<string> = new Set<FaceErrorCode>([
  'DB_UNUSABLE',
  'NOT_INITIALIZED',
  'STORE_TOO_NEW',
  'MIGRATION_MISMATCH',
  'REINDEX_REQUIRED',
  'STORE_ERROR',
  'STORE_LOCKED',
  'HOST_REFUSED',
  'HOST_LOST',
  'ENGINE_CLOSED',
  'BAD_PASSPHRASE',
  'KEY_UNREADABLE',
  'PASSPHRASE_REQUIRED',
  'PROBE_ROLE_MISSING',
  'EMBEDDER_FAILED',
  'LLM_FAILED',
  'INTERNAL',
]);

const MAX_MESSAGE = 1_000;
const HIDDEN = 'internal error (the server log has the detail)';

/**
 * The one place the MCP face turns a failure into what a client sees: an EngineError keeps its
 * code, message and data (unless it is the server's own failure, above); anything else is
 * INTERNAL with a fixed message, its detail going only to the server's own log. A message may
 * quote the caller's strings: it is shown on one line, receipt markers defanged (`shownInline`).
 */
export function describeMcpError(
  err: unknown,
  onInternal?: InternalErrorSink,
): { code: FaceErrorCode; message: string; data?: Record<string, unknown> } {
  const coded = codedError(err);
  if (coded !== null && !WITHHELD.has(coded.code)) {
    return {
      code: coded.code,
      message: shownInline(coded.message).slice(0, MAX_MESSAGE),
      ...(coded.data ? { data: coded.data } : {}),
    };
  }
  onInternal?.(err);
  return { code: coded?.code ?? 'INTERNAL', message: HIDDEN };
}

/** A tool's failure as a tool error: `isError`, the code in the text and in structuredContent. */
export function toolError(err: unknown, onInternal?: InternalErrorSink): CallToolResult {
  const error = describeMcpError(err, onInternal);
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${error.message}` }],
    structuredContent: { error },
  };
}

/**
 * A prompt's or resource's failure (they have no error result): a JSON-RPC error whose data
 * carries the engine code.
 */
export function protocolError(err: unknown, onInternal?: InternalErrorSink): ProtocolError {
  const error = describeMcpError(err, onInternal);
  const code = CALLER_CODES.has(error.code)
    ? ProtocolErrorCode.InvalidParams
    : ProtocolErrorCode.InternalError;
  return new ProtocolError(code, `${error.code}: ${error.message}`, { error });
}
