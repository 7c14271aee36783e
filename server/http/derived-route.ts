import { z } from '@hono/zod-openapi';
import type { Engine } from '../../src/index.js';
import type { OperationCall, OperationSpec } from '../operations/operation.js';
import { validationHook } from './http-errors.js';
import { jsonResponse, operationRoute, send, type HttpApp } from './route-kit.js';

/** The `{name}`s of a path. */
function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] ?? '');
}

/**
 * The route of an operation that declares its call: path parameters are the input's fields its
 * path names; the rest of the input is the query of a GET and the JSON body of anything else (a
 * body that the input allows to be empty may be left out); the answer is the call's output, every
 * stored string in it shown as a model is shown stored text.
 */
export function registerDerivedRoute(app: HttpApp, engine: Engine, op: OperationSpec): void {
  const call: OperationCall | undefined = op.call;
  const http = op.http;
  if (call === undefined || http === undefined) {
    throw new Error(`${op.name}: a derived route needs the operation's call and HTTP face`);
  }
  const names = pathParams(http.path);
  const shape = call.input.shape as Record<string, z.ZodType>;
  for (const name of names) {
    if (shape[name] === undefined) {
      throw new Error(`${op.name}: the path names {${name}}, which its input does not hold`);
    }
  }
  const params =
    names.length === 0
      ? undefined
      : z.strictObject(Object.fromEntries(names.map((n) => [n, shape[n] as z.ZodType])));
  const rest = z.strictObject(
    Object.fromEntries(Object.entries(shape).filter(([name]) => !names.includes(name))),
  );
  const isGet = http.method === 'get';
  const request = {
    ...(params === undefined ? {} : { params }),
    ...(isGet
      ? { query: rest }
      : {
          body: {
            required: !rest.safeParse({}).success,
            content: { 'application/json': { schema: rest } },
          },
        }),
  };
  const route = operationRoute(engine, op, {
    request,
    responses: jsonResponse(call.output, op.doc),
  });
  app.openapi(route, async (c) => {
    // the request as sent, parsed once by the call's input, so a field that transforms (a query
    // string read as a number, a date) is read as it would be by the MCP tool; the path's
    // parameters last, so nothing in a query or body stands in for them
    const raw: Record<string, unknown> = {
      ...(isGet ? c.req.query() : ((await c.req.json()) as Record<string, unknown>)),
      ...(params === undefined ? {} : c.req.param()),
    };
    const parsed = call.input.safeParse(raw);
    if (!parsed.success) {
      // throws INVALID_ARGUMENT naming the field, as a route's own validation does
      validationHook({ success: false, error: parsed.error, target: isGet ? 'query' : 'json' });
      throw parsed.error;
    }
    const answer = await call.run(c.var.caller.handle, parsed.data);
    return c.json(send(call.output, answer) as never, 200);
  });
}
