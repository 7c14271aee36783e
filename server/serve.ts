import { ServerError } from './server-errors.js';
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  createMcpHandler,
  localhostAllowedHostnames,
  validateHostHeader,
  validateOriginHeader,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { EngineError, type Engine } from '../src/index.js';
import { authenticateBearer, type Caller } from './access.js';
import { createHttpApp, DEFAULT_BODY_LIMIT, type InternalErrorReporter } from './http/app.js';
import {
  bodyTooLarge,
  errorResponse,
  requireIdentityEncoding,
  routeNotFound,
} from './http/http-errors.js';
import { refuseDuplicateKeys } from './http/strict-json.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './listen-defaults.js';
import { invalidParams } from './mcp/mcp-inbound.js';
import { createMcpServer } from './mcp/mcp-server.js';
import { createPileNotifier, type PileNotifier } from './review/pile-notifier.js';
import { createReviewApp, type ReviewConfig } from './review/review-app.js';

export interface ServeAppConfig {
  engine: Engine;
  /**
   * Host names a request may be addressed to (the `Host` header, and a browser's `Origin`):
   * DNS-rebinding protection. Default: the loopback names only.
   */
  allowedHosts?: readonly string[];
  /** The largest request body, in bytes, on /v1 and /mcp alike (default 1 MiB). */
  bodyLimitBytes?: number;
  /** Where failures that are not the caller's doing go (default: one line on stderr). */
  onInternalError?: InternalErrorReporter;
  /**
   * The owner's review page at `/`: the subject it reviews and the owner key file that unlocks
   * it. Without one the page says it cannot be unlocked; the API and MCP serve all the same.
   */
  review?: ReviewConfig;
}

export interface ServeApp {
  /** The Hono app: the review page at /, the HTTP API, /healthz, /openapi.json and /mcp. */
  readonly app: Hono;
  /** The review page's subject and its owner sessions (how many hold the key, for tests). */
  readonly review: ReturnType<typeof createReviewApp>;
  /** Ends in-flight MCP exchanges and forgets every owner key the review page holds. */
  close(): Promise<void>;
}

const reportToStderr: InternalErrorReporter = (err) => {
  const what = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`memledger serve: ${what}\n`);
};

/** Hostnames as the SDK's validators compare them: lowercase, IPv6 in brackets. */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  return isIP(h) === 6 ? `[${h}]` : h;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * What /mcp refuses before the SDK reads a body, as /v1 does: a content coding (the SDK would
 * read the coded bytes as plain, UNSUPPORTED_ENCODING) and a JSON object naming one key twice
 * (the last would silently win, INVALID_JSON). A body that is not UTF-8 JSON at all is left to
 * the SDK, which answers it as a JSON-RPC parse error. Reads a copy: the request keeps its body,
 * and the parsed message is returned (undefined without one).
 */
async function checkMcpBody(request: Request): Promise<unknown> {
  requireIdentityEncoding(request.headers.get('content-encoding') ?? undefined);
  if (request.body === null) return undefined;
  let text: string;
  let message: unknown;
  try {
    text = UTF8.decode(await request.clone().arrayBuffer());
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  refuseDuplicateKeys(text);
  return message;
}

/**
 * One process, three faces: the owner's review page at /, the HTTP API, and MCP over Streamable
 * HTTP at /mcp. Every /mcp request
 * is authenticated by its own bearer token and served by a fresh, stateless MCP server for that
 * caller, so no session id exists that another token could present.
 */
export function createServeApp(config: ServeAppConfig): ServeApp {
  const { engine } = config;
  const report = config.onInternalError ?? reportToStderr;
  const limit = config.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const hosts = [
    ...new Set([...localhostAllowedHostnames(), ...(config.allowedHosts ?? []).map(hostnameOf)]),
  ];

  // The SDK hands the factory the very AuthInfo object given to `fetch`: the caller rides on it.
  const callers = new WeakMap<AuthInfo, Caller>();
  const mcp = createMcpHandler(
    ({ authInfo }) => {
      const caller = authInfo === undefined ? undefined : callers.get(authInfo);
      if (caller === undefined) {
        throw new ServerError('TOKEN_REQUIRED', 'an MCP request without an authenticated caller');
      }
      return createMcpServer(caller, { onInternalError: report });
    },
    // onerror hears every refused request too; the responses already say what went wrong
    { legacy: 'stateless', maxRequestBodySize: limit, onerror: () => undefined },
  );

  const app = new Hono();
  app.onError((err, c) => errorResponse(c, err, report));
  app.notFound(routeNotFound);
  app.use('*', async (c, next) => {
    const host = validateHostHeader(c.req.header('host'), hosts);
    if (!host.ok) {
      throw new ServerError('HOST_NOT_ALLOWED', `this server does not answer to that Host`);
    }
    const origin = validateOriginHeader(c.req.header('origin'), hosts);
    if (!origin.ok) {
      throw new ServerError('HOST_NOT_ALLOWED', `requests from that Origin are refused`);
    }
    await next();
  });
  app.use('/mcp', bodyLimit({ maxSize: limit, onError: () => bodyTooLarge(limit) }));
  app.all('/mcp', async (c) => {
    const caller = await authenticateBearer(engine, c.req.header('authorization'));
    // params the method does not take: -32602 naming the field (the SDK's is -32603 and a dump)
    const refusal = invalidParams(await checkMcpBody(c.req.raw));
    if (refusal !== null) return c.json(refusal, 200);
    const authInfo: AuthInfo = {
      token: caller.tokenId ?? '',
      clientId: caller.tokenId ?? caller.subject,
      scopes: [caller.role],
    };
    callers.set(authInfo, caller);
    return mcp.fetch(c.req.raw, { authInfo });
  });
  const review = createReviewApp(
    engine,
    config.review ?? {
      keyFile: null,
      keyProblem: 'this server was started without an owner key file for the review page',
    },
    report,
  );
  app.route('/', review.app);
  app.route('/', createHttpApp({ engine, bodyLimitBytes: limit, onInternalError: report }));
  return {
    app,
    review,
    close: async () => {
      review.close();
      await mcp.close();
    },
  };
}

export interface ServeConfig extends Omit<ServeAppConfig, 'allowedHosts'> {
  /** The address to listen on (default 127.0.0.1). */
  host?: string;
  /** The port (default 7777; 0 picks a free one). */
  port?: number;
  /** Listening on a non-loopback address needs this, said explicitly. */
  allowRemote?: boolean;
  /** More host names requests may be addressed to (a name for a wildcard address, a proxy's). */
  allowedHosts?: readonly string[];
  /**
   * Where to POST a notice when the review subject's pile fills (and once a day while it stays
   * full): loopback, or a host of `notifyAllowlist`, else NOTIFY_HOST_NOT_ALLOWED before binding.
   */
  notifyUrl?: string;
  notifyAllowlist?: readonly string[];
  /** How often the pile is looked at for the notice (default 30 s). */
  notifyIntervalMs?: number;
}

export interface RunningServe {
  /** The base URL, e.g. `http://127.0.0.1:7777/`: the review page; MCP is at `mcp` under it. */
  readonly url: string;
  readonly review: ServeApp['review'];
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export { DEFAULT_HOST, DEFAULT_PORT } from './listen-defaults.js';

/** Whether an address or name is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Listens (loopback by default): a non-loopback address without `allowRemote` is
 * REMOTE_NOT_ALLOWED, refused before anything binds.
 */
export async function startServe(config: ServeConfig): Promise<RunningServe> {
  const host = (config.host ?? DEFAULT_HOST).replace(/^\[(.*)\]$/, '$1');
  const port = config.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new EngineError('INVALID_ARGUMENT', `port ${String(port)} is not 0 to 65535`, {
      data: { field: 'port' },
    });
  }
  const remote = !isLoopback(host);
  if (remote && config.allowRemote !== true) {
    throw new ServerError(
      'REMOTE_NOT_ALLOWED',
      `refusing to listen on ${host}, which is not loopback: anyone who can reach it could try tokens. Pass --allow-remote to mean it (and put TLS in front)`,
      { data: { host } },
    );
  }
  // A specific remote address is a name requests may carry; a wildcard names nothing.
  const allowedHosts = [
    ...(config.allowedHosts ?? []),
    ...(remote && !WILDCARDS.has(host) ? [host] : []),
  ];
  const subject = config.review?.subject ?? 'owner';
  const me = config.engine.subject(subject);
  let reviewUrl = '';
  // made before anything binds: a notify URL that is not allowed starts nothing
  const notifier: PileNotifier | null =
    config.notifyUrl === undefined
      ? null
      : createPileNotifier({
          url: config.notifyUrl,
          allowlist: config.notifyAllowlist ?? [],
          subject,
          pileCount: () => me.gate.pileCount(),
          get reviewUrl() {
            return reviewUrl;
          },
          ...(config.notifyIntervalMs === undefined ? {} : { intervalMs: config.notifyIntervalMs }),
        });
  const serveApp = createServeApp({ ...config, allowedHosts });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: serveApp.app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => {
      void serveApp.close();
      reject(
        new EngineError(
          'INVALID_ARGUMENT',
          `cannot listen on ${host}:${port} (${err.code ?? err.message})`,
          { data: { field: 'listen' }, cause: err },
        ),
      );
    });
  });
  const address = server.address() as AddressInfo;
  const shown = isIP(host) === 6 ? `[${host}]` : host;
  reviewUrl = `http://${shown}:${address.port}/`;
  notifier?.start();
  return {
    url: reviewUrl,
    host,
    port: address.port,
    review: serveApp.review,
    async close() {
      await notifier?.stop();
      await serveApp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
    },
  };
}
