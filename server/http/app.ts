import { OpenAPIHono, z } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { Engine } from '../../src/index.js';
import {
  bodyTooLarge,
  errorResponse,
  routeNotFound,
  validationHook,
  type InternalErrorReporter,
} from './http-errors.js';
import type { OperationSpec } from '../operations/operation.js';
import { OPERATION_TABLE } from '../operations/table.js';
import { registerDerivedRoute } from './derived-route.js';
import { OPERATION_KEY, type HttpApp, type HttpEnv } from './route-kit.js';
import { registerArrivalRoutes } from './routes-arrival.js';
import { registerGateRoutes } from './routes-gate.js';
import { registerLedgerRoutes } from './routes-ledger.js';
import { registerProbeRoutes } from './routes-probes.js';
import { registerRecallRoutes } from './routes-recall.js';
import { registerReflectionRoutes } from './routes-reflection.js';
import { registerSessionRoutes } from './routes-sessions.js';

export type { HttpApp, HttpEnv } from './route-kit.js';
export type { InternalErrorReporter } from './http-errors.js';

export interface HttpAppConfig {
  engine: Engine;
  /** The largest request body accepted, in bytes (default 1 MiB); larger is BODY_TOO_LARGE. */
  bodyLimitBytes?: number;
  /** Where failures that are not the caller's doing go (default: one line on stderr). */
  onInternalError?: InternalErrorReporter;
  /**
   * The operation table the routes are made from (default `OPERATION_TABLE`). It must hold every
   * operation of the table; one added to it with a call is served by a derived route.
   */
  operations?: readonly OperationSpec[];
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const reportToStderr: InternalErrorReporter = (err) => {
  const what = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`memledger http: ${what}\n`);
};

/** Routes an earlier route of the same method answers first: `GET /v1/x/{id}` before `GET /v1/x/y`. */
function shadowed(routes: readonly Record<string, unknown>[]): string[] {
  const literal = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  // each route once: its method, its path, and what requests its path answers
  const seen = routes.map((r) => {
    const path = String(r.path);
    const answers = new RegExp(
      `^${path
        .split(/\{[^}]+\}/)
        .map(literal)
        .join('[^/]+')}$`,
    );
    return { method: r.method, path, answers };
  });
  return seen.flatMap((later, i) =>
    seen
      .slice(0, i)
      .filter((earlier) => earlier.method === later.method && earlier.answers.test(later.path))
      .map((earlier) => `${later.path} is answered by ${earlier.path}, added before it`),
  );
}

/**
 * Refuses to serve when the routes and the table disagree: an operation of the table with an
 * HTTP face and no route (no adapter and no call), a route of an operation the table does not
 * list, one operation with two routes, or a route that one added before it would answer.
 */
function checkRoutes(app: HttpApp, operations: readonly OperationSpec[]): void {
  const routes = app.openAPIRegistry.definitions.flatMap((d) =>
    d.type === 'route' ? [d.route as unknown as Record<string, unknown>] : [],
  );
  const named = routes
    .map((route) => route[OPERATION_KEY])
    .filter((name): name is string => typeof name === 'string');
  const declared = operations.filter((op) => op.http !== undefined).map((op) => op.name);
  const problems = [
    ...declared.filter((name) => !named.includes(name)).map((n) => `${n} has no route`),
    ...named.filter((name) => !declared.includes(name)).map((n) => `${n} is not in the table`),
    ...named.filter((name, i) => named.indexOf(name) !== i).map((n) => `${n} has two routes`),
    ...shadowed(routes),
  ];
  if (problems.length > 0) {
    throw new Error(`the HTTP routes and the operation table disagree: ${problems.join('; ')}`);
  }
}

/**
 * The HTTP API (`/v1/…`, `/healthz`, `/openapi.json`): every route calls the engine API through
 * the subject handle its token names, and nothing else. Mountable: `/mcp` and the listener live
 * beside it (server/serve.ts).
 */
export function createHttpApp(config: HttpAppConfig): HttpApp {
  const { engine } = config;
  const limit = config.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const report = config.onInternalError ?? reportToStderr;
  const app = new OpenAPIHono<HttpEnv>({ defaultHook: validationHook });

  app.onError((err, c) => errorResponse(c, err, report));
  app.notFound(routeNotFound);
  app.use('/v1/*', bodyLimit({ maxSize: limit, onError: () => bodyTooLarge(limit) }));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'a memledger token (`memledger token create`): agent or reader, one subject',
  });

  registerSessionRoutes(app, engine);
  registerGateRoutes(app, engine);
  registerLedgerRoutes(app, engine);
  registerProbeRoutes(app, engine);
  registerArrivalRoutes(app, engine);
  registerRecallRoutes(app, engine);
  registerReflectionRoutes(app, engine);
  const operations: readonly OperationSpec[] = config.operations ?? OPERATION_TABLE;
  // Hono tries routes in the order they were added: a path without parameters before one with
  // them, so `/v1/facts/integrity` is never read as the fact `integrity`
  const params = (op: OperationSpec) => (op.http?.path.match(/\{/g) ?? []).length;
  const derived = operations.filter((op) => op.http !== undefined && op.call !== undefined);
  for (const op of [...derived].sort((a, b) => params(a) - params(b))) {
    registerDerivedRoute(app, engine, op);
  }
  checkRoutes(app, operations);

  app.openapi(
    {
      method: 'get',
      path: '/healthz',
      summary: 'Liveness: answers without a token and reads nothing',
      responses: {
        200: {
          description: 'the server is up',
          content: { 'application/json': { schema: z.object({ ok: z.literal(true) }) } },
        },
      },
    },
    (c) => c.json({ ok: true as const }, 200),
  );

  // made once, on the first request, when every route is registered; served without a token
  let doc: unknown;
  app.get('/openapi.json', (c) => {
    doc ??= app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'memledger',
        version: '1',
        description:
          'A memory engine that keeps its receipts. Every route acts for the one subject its token names.',
      },
    });
    return c.json(doc);
  });
  return app;
}
