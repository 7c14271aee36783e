import { createRoute, z, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { EngineError, type Engine } from '../../src/index.js';
import { shownJson } from '../../src/rules.js';
import { authenticateBearer, type Caller } from '../access.js';
import type { OperationSpec } from '../operations/operation.js';
import { operationSpec, requireRole, type Operation } from '../operations/table.js';
import { invalidJson, requireIdentityEncoding } from './http-errors.js';
import { refuseDuplicateKeys } from './strict-json.js';
import { ErrorBody } from './schemas.js';

/** What every route's handler finds on its context: the caller its token names. */
export interface HttpEnv {
  Variables: { caller: Caller };
}

/** The HTTP API's app type. */
export type HttpApp = OpenAPIHono<HttpEnv>;

/** Where each route names its one operation (in the OpenAPI document too). */
export const OPERATION_KEY = 'x-memledger-operation';

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody } },
});

const ERROR_RESPONSES = {
  400: error('bad input: INVALID_ARGUMENT (naming the field), INVALID_JSON, or an engine code'),
  401: error('no token (TOKEN_REQUIRED), or an invalid or revoked one'),
  403: error("the token's role may not run this operation (ROLE_FORBIDDEN)"),
  404: error("not found; another subject's record reads exactly like a missing one"),
  409: error('the record is not in a state that allows this'),
  413: error('the body is over the size limit (BODY_TOO_LARGE)'),
  415: error(
    'the body was sent with a Content-Encoding the server does not decode (UNSUPPORTED_ENCODING)',
  ),
  500: error('INTERNAL; the message never carries internals'),
} as const;

type BodyMode = 'none' | 'json' | 'json-or-empty';

const JSON_TYPE = /^application\/json[ \t]*(;[ \t]*charset[ \t]*=[ \t]*"?utf-8"?[ \t]*)?$/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads the body as strict UTF-8 JSON before the schema sees it, so malformed JSON, another
 * media type, bytes that are not UTF-8 or an object naming one key twice are INVALID_JSON, and a
 * body sent with a content coding is UNSUPPORTED_ENCODING: never a lenient reading.
 */
async function readJson(c: Context<HttpEnv>, mode: BodyMode): Promise<void> {
  requireIdentityEncoding(c.req.header('content-encoding'));
  const type = c.req.header('content-type');
  const isJson = type !== undefined && JSON_TYPE.test(type.trim());
  if (type !== undefined && type !== '' && !isJson) {
    throw invalidJson('the body must be JSON, sent with Content-Type: application/json');
  }
  // cached by Hono: the schema's validator reads these same bytes
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.byteLength === 0 && mode === 'json-or-empty') {
    // an action that needs no input may be sent with no body; it reads as {}
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve('{}');
    return;
  }
  if (!isJson) throw invalidJson('the body must be JSON, sent with Content-Type: application/json');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalidJson('the body is not valid UTF-8');
  }
  try {
    JSON.parse(text);
  } catch {
    throw invalidJson('the body is not valid JSON');
  }
  refuseDuplicateKeys(text);
}

/**
 * Hono keeps a percent-sequence it cannot decode as literal text; the API refuses the request
 * instead, so `%ED%A0%80` (a surrogate half in UTF-8) never reads as a harmless-looking string.
 */
function checkQueryEncoding(url: string): void {
  const at = url.indexOf('?');
  if (at === -1) return;
  try {
    decodeURIComponent(url.slice(at + 1));
  } catch {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'the query string is not valid percent-encoded UTF-8',
      { data: { field: 'query' } },
    );
  }
}

/** No route takes a query parameter it does not name. */
const NO_QUERY = z.strictObject({});

/**
 * The one middleware of every route: the token's caller (401 without a valid one), its role
 * checked against the route's operation (403), then the body read as JSON.
 */
function guard(
  engine: Engine,
  operation: OperationSpec,
  mode: BodyMode,
): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const caller = await authenticateBearer(engine, c.req.header('authorization'));
    requireRole(caller, operation);
    c.set('caller', caller);
    checkQueryEncoding(c.req.url);
    if (mode !== 'none') await readJson(c, mode);
    await next();
  };
}

/** What a route's adapter says; its method, path, tag and summary are the operation table's. */
type ApiRouteConfig = Omit<
  RouteConfig,
  'middleware' | 'hide' | 'method' | 'path' | 'tags' | 'summary'
>;

/**
 * The route of an operation of the table (server/operations/table.ts), from its adapter's request
 * and response shapes: the table's method, path, tag and doc line, its role guarding it, its name
 * recorded in the OpenAPI document under `x-memledger-operation`, every failure status documented.
 */
export function apiRoute<const R extends ApiRouteConfig>(
  engine: Engine,
  operation: Operation,
  config: R,
) {
  return operationRoute(engine, operationSpec(operation), config);
}

/** `apiRoute` for any operation's entry, one of the table's or one a test adds to it. */
export function operationRoute<const R extends ApiRouteConfig>(
  engine: Engine,
  operation: OperationSpec,
  config: R,
) {
  const http = operation.http;
  if (http === undefined) throw new Error(`${operation.name} has no HTTP face in the table`);
  const body = config.request?.body;
  const mode: BodyMode =
    body === undefined ? 'none' : body.required === true ? 'json' : 'json-or-empty';
  const route = createRoute({
    ...config,
    method: http.method,
    path: http.path,
    tags: [http.tag],
    summary: operation.doc,
    [OPERATION_KEY]: operation.name,
    security: [{ bearer: [] }],
    middleware: guard(engine, operation, mode),
    responses: { ...config.responses, ...ERROR_RESPONSES },
  });
  // a route that names no query parameter refuses any (typed as it was: there is none to read)
  if (config.request?.query === undefined) {
    Object.assign(route, { request: { ...config.request, query: NO_QUERY } });
  }
  return route;
}

/**
 * An answer as its schema says: the value as JSON (dates as ISO strings), every string in it shown
 * as a model is shown stored text (`shownJson`: receipt markers defanged, what does not show as
 * code points, line breaks kept as data), then parsed by the schema, which drops anything it does
 * not name.
 */
export function send<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return schema.parse(shownJson(JSON.parse(JSON.stringify(value)) as unknown));
}

/**
 * An answer whose text memledger rendered itself (an arrival, history's messages): their stored
 * strings were shown when they were rendered, and their receipt lines are memledger's own, so
 * nothing is shown again. Any other stored string in the value must be shown by the caller.
 */
export function sendRendered<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return schema.parse(JSON.parse(JSON.stringify(value)) as unknown);
}

/** The response of a route: the schema it answers with, as JSON. */
export function jsonResponse<S extends z.ZodType>(schema: S, description: string) {
  return { 200: { description, content: { 'application/json': { schema } } } } as const;
}

export const DEFAULT_PAGE = 50;

export interface PageQuery {
  limit?: number | undefined;
  offset?: number | undefined;
}

/**
 * One page of a list the engine pages (`PageOptions`): one item more than the page is asked
 * for, so the answer knows whether another page follows, however far the offset reaches.
 */
export async function enginePage<T>(
  q: PageQuery,
  list: (page: { limit: number; offset: number }) => Promise<T[]>,
): Promise<{
  items: T[];
  page: { limit: number; offset: number; nextOffset: number | null; truncated: boolean };
}> {
  const limit = q.limit ?? DEFAULT_PAGE;
  const offset = q.offset ?? 0;
  const rows = await list({ limit: limit + 1, offset });
  const more = rows.length > limit;
  return {
    items: rows.slice(0, limit),
    page: { limit, offset, nextOffset: more ? offset + limit : null, truncated: false },
  };
}

/** One page of a list the face holds whole (one the engine answers in full). */
export function pageOf<T>(
  all: readonly T[],
  q: PageQuery,
): {
  items: T[];
  page: { limit: number; offset: number; nextOffset: number | null; truncated: boolean };
} {
  const limit = q.limit ?? DEFAULT_PAGE;
  const offset = q.offset ?? 0;
  const end = offset + limit;
  const more = all.length > end;
  return {
    items: all.slice(offset, end),
    page: {
      limit,
      offset,
      nextOffset: more ? end : null,
      truncated: false,
    },
  };
}

/** A parsed input with zod's `?: T | undefined` narrowed to `?: T`: parsed JSON never holds undefined. */
export type Exact<T> = T extends Date
  ? T
  : T extends object
    ? { [K in keyof T]: Exact<Exclude<T[K], undefined>> }
    : T;

/** `value` typed as `Exact`: what a strict schema parsed from JSON can be passed on as it is. */
export function exact<T>(value: T): Exact<T> {
  return value as Exact<T>;
}
