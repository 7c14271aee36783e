import {
  ProtocolErrorCode,
  specTypeSchemas,
  type JSONRPCErrorResponse,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server';
import { EngineError } from '../../src/index.js';
import { protocolError } from './mcp-errors.js';

/**
 * The params of each request this server answers. The SDK checks them too, but answers a
 * failure with -32603 and its validator's raw dump (every method but tools/call): checked here
 * first, a failure is -32602 naming the field.
 */
const PARAMS: Readonly<Record<string, StandardSchemaV1>> = {
  'tools/call': specTypeSchemas.CallToolRequestParams,
  'prompts/get': specTypeSchemas.GetPromptRequestParams,
  'resources/read': specTypeSchemas.ReadResourceRequestParams,
  'tools/list': specTypeSchemas.PaginatedRequestParams,
  'prompts/list': specTypeSchemas.PaginatedRequestParams,
  'resources/list': specTypeSchemas.PaginatedRequestParams,
  'resources/templates/list': specTypeSchemas.PaginatedRequestParams,
};

type Id = string | number | null;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function answer(id: Id, code: number, message: string, data?: unknown): JSONRPCErrorResponse {
  return {
    jsonrpc: '2.0',
    id,
    error: { code, message, ...(data === undefined ? {} : { data }) },
  } as JSONRPCErrorResponse;
}

/** A line that is not JSON at all: JSON-RPC's parse error, with no id (none could be read). */
export function parseErrorAnswer(): JSONRPCErrorResponse {
  return answer(null, ProtocolErrorCode.ParseError, 'Parse error: the message is not JSON');
}

/** Why `m` is not a JSON-RPC 2.0 message MCP takes, in words; null when it is one. */
function shapeProblem(m: unknown): string | null {
  if (Array.isArray(m)) return 'a batch (a JSON array) is not supported: send one message';
  if (!isObject(m)) return 'a message is a JSON object';
  if (m.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in m && typeof m.method !== 'string') return 'method must be a string';
  if ('params' in m && !isObject(m.params)) return 'params must be an object';
  if ('id' in m && typeof m.id !== 'string' && !Number.isSafeInteger(m.id)) {
    return 'id must be a string or a whole number';
  }
  const valid = specTypeSchemas.JSONRPCMessage['~standard'].validate(m);
  return 'issues' in valid && valid.issues !== undefined
    ? 'not a JSON-RPC 2.0 request, notification or response'
    : null;
}

function fieldOf(path: StandardSchemaV1.Issue['path']): string {
  return (path ?? []).map((p) => String(typeof p === 'object' ? p.key : p).slice(0, 64)).join('.');
}

/**
 * -32600 for what is not a JSON-RPC message MCP takes, with the request's id when one can be
 * read; null for a message. (Over HTTP the SDK answers these itself; over stdio it drops them.)
 */
export function invalidMessage(message: unknown): JSONRPCErrorResponse | null {
  const problem = shapeProblem(message);
  if (problem === null) return null;
  const id = isObject(message) ? message.id : undefined;
  return answer(
    typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : null,
    ProtocolErrorCode.InvalidRequest,
    `Invalid Request: ${problem}`,
  );
}

/**
 * -32602 for a request of this server whose params are not what its method takes, naming the
 * field (in the engine's words: INVALID_ARGUMENT, as a prompt's own refusal says it); null for
 * anything else, a message of another shape included.
 */
export function invalidParams(message: unknown): JSONRPCErrorResponse | null {
  if (!isObject(message) || typeof message.method !== 'string') return null;
  const { id, method, params } = message;
  const schema = PARAMS[method];
  if (schema === undefined || !(typeof id === 'string' || Number.isSafeInteger(id))) return null;
  if (params !== undefined && !isObject(params)) return null;
  const checked = schema['~standard'].validate(params ?? {});
  if ('then' in checked || checked.issues === undefined) return null;
  const issue = checked.issues[0];
  const field = fieldOf(issue?.path) || 'params';
  const failure = protocolError(
    new EngineError('INVALID_ARGUMENT', `${method}: ${field}: ${issue?.message ?? 'is invalid'}`, {
      data: { field },
    }),
  );
  return answer(id as string | number, failure.code, failure.message, failure.data);
}

/** What stdio refuses before the SDK reads a message: `invalidMessage`, then `invalidParams`. */
export function inboundRefusal(message: unknown): JSONRPCErrorResponse | null {
  return invalidMessage(message) ?? invalidParams(message);
}
