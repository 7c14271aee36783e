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
import type { HttpApp, HttpEnv } from './route-kit.js';
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
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const reportToStderr: InternalErrorReporter = (err) => {
  const what = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`memledger http: ${what}\n`);
};

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
