/**
 * One load run of bench:serve: autocannon with `connections` keep-alive connections, pipelining
 * 1 (one request in flight per connection, the next sent when the answer is in), each
 * connection looping over requests its own seeded traffic builds (bench/support/serve-mix.ts).
 *
 * Per-route latency: autocannon's histogram is one for all routes, so each connection carries
 * its own state. `setupClient` hands each connection (a Client, in autocannon's README) a
 * request whose `setupRequest` picks the route and fills in method, path and body, and notes the
 * route as the one in flight; with pipelining 1 the next response on that connection answers
 * exactly that request. The Client's `response` event gives autocannon's own time for it (from
 * the request's write to the response's last byte), recorded under the route; `onResponse` gets
 * the status and body (an error's code; what a proposal, an arrival or a recall returned).
 * A `timeout` is the request before the one autocannon sent on the remade connection, a
 * `connError` the one in flight. Requests sent and not answered, beyond the one each connection
 * has in flight when the run stops, are counted as lost.
 */
import { performance } from 'node:perf_hooks';
import { progress } from './progress.js';
import { autocannon, type AcClient, type AcResult } from './serve-autocannon.js';
import { connectionTraffic, ROUTES, type BuiltRequest, type Route } from './serve-mix.js';
import type { ServeFixture } from './serve-seed.js';
import { stats, type Stats } from './stats.js';

/** Seconds autocannon waits for one response before it counts a timeout. */
export const REQUEST_TIMEOUT_S = 10;
const JSON_TYPE = 'application/json';

interface RouteTally {
  ms: number[];
  ok: number;
  /** Non-2xx answers by status. */
  statuses: Record<string, number>;
  /** Non-2xx answers by the error code in their body. */
  codes: Record<string, number>;
  firstError: string | null;
  timeouts: number;
  socketErrors: number;
  /** propose: proposals that went to the pile, and drops by code. */
  proposed: number;
  dropped: Record<string, number>;
  /** arrival: arrivals with a degraded block, by block and reason. */
  degradedArrivals: number;
  degradedBlocks: Record<string, number>;
  /** recall: items returned, summed. */
  items: number;
}

const emptyTally = (): RouteTally => ({
  ms: [],
  ok: 0,
  statuses: {},
  codes: {},
  firstError: null,
  timeouts: 0,
  socketErrors: 0,
  proposed: 0,
  dropped: {},
  degradedArrivals: 0,
  degradedBlocks: {},
  items: 0,
});

const bump = (o: Record<string, number>, k: string, n = 1): void => {
  o[k] = (o[k] ?? 0) + n;
};

/** One route's figures in one run. */
export interface RouteResult {
  /** Responses received (any status). */
  count: number;
  /** Latency of every response received, in ms. */
  latency: Stats;
  /** Non-2xx answers + timeouts + socket errors. */
  errors: number;
  non2xx: Record<string, number>;
  errorCodes: Record<string, number>;
  firstError: string | null;
  timeouts: number;
  socketErrors: number;
  /** propose only. */
  proposals?: { proposed: number; dropped: Record<string, number> };
  /** arrival only. */
  degraded?: { arrivals: number; blocks: Record<string, number> };
  /** recall only: mean items per answer. */
  meanItems?: number;
}

export interface RunResult {
  connections: number;
  /** Seconds, as autocannon measured the run. */
  durationS: number;
  /** Responses received per second, every route. */
  rps: number;
  routes: Record<Route, RouteResult>;
  total: {
    count: number;
    latency: Stats;
    errors: number;
    /** Sent, never answered, not timed out, not in flight at the end (a connection the server closed). */
    lost: number;
  };
  /** autocannon's own totals, to cross-check the per-route ones. */
  autocannon: {
    responses: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    latencyP50: number;
    latencyP99: number;
  };
}

function summarize(route: Route, t: RouteTally): RouteResult {
  const non2xx = Object.values(t.statuses).reduce((a, b) => a + b, 0);
  const r: RouteResult = {
    count: t.ms.length,
    latency: stats(t.ms),
    errors: non2xx + t.timeouts + t.socketErrors,
    non2xx: t.statuses,
    errorCodes: t.codes,
    firstError: t.firstError,
    timeouts: t.timeouts,
    socketErrors: t.socketErrors,
  };
  if (route === 'propose') r.proposals = { proposed: t.proposed, dropped: t.dropped };
  if (route === 'arrival') r.degraded = { arrivals: t.degradedArrivals, blocks: t.degradedBlocks };
  if (route === 'recall') r.meanItems = t.ok === 0 ? 0 : t.items / t.ok;
  return r;
}

/** Reads what the answer says, for the report: an error's code, or the route's outcome. */
function readBody(route: Route, status: number, body: string, t: RouteTally): void {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    v = null;
  }
  if (status < 200 || status > 299) {
    const err = (v as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    const code = typeof err?.code === 'string' ? err.code : 'no error body';
    bump(t.codes, code);
    t.firstError ??= `${status} ${code}: ${String(err?.message ?? body.slice(0, 200))}`;
    return;
  }
  t.ok++;
  if (route === 'propose') {
    const p = v as { proposed?: unknown[]; dropped?: Array<{ code?: string }> } | null;
    t.proposed += p?.proposed?.length ?? 0;
    for (const d of p?.dropped ?? []) bump(t.dropped, d.code ?? '?');
  } else if (route === 'arrival') {
    const blocks = (v as { blocks?: Array<{ name?: string; degraded?: boolean; reason?: string }> })
      ?.blocks;
    const degraded = (blocks ?? []).filter((b) => b.degraded === true);
    if (degraded.length > 0) t.degradedArrivals++;
    for (const b of degraded) bump(t.degradedBlocks, `${b.name ?? '?'} (${b.reason ?? '?'})`);
  } else if (route === 'recall') {
    t.items += (v as { items?: unknown[] } | null)?.items?.length ?? 0;
  }
}

export interface LoadOptions {
  url: string;
  fixture: ServeFixture;
  connections: number;
  durationS: number;
  seed: number;
  /** For progress lines. */
  label: string;
  /** Seconds to wait for one response (default REQUEST_TIMEOUT_S). */
  timeoutS?: number;
}

/** Runs the mix against `url` for `durationS` seconds and tallies it per route. */
export async function runLoad(o: LoadOptions): Promise<RunResult> {
  const tallies = Object.fromEntries(ROUTES.map((r) => [r, emptyTally()])) as Record<
    Route,
    RouteTally
  >;
  let sent = 0;
  let timeouts = 0;
  let socketErrors = 0;
  let clients = 0;

  const setupClient = (client: AcClient): void => {
    const traffic = connectionTraffic(o.fixture, clients++, o.seed);
    const authorization = `Bearer ${traffic.token}`;
    // the request in flight on this connection, and the one before it
    let current: Route = 'turn';
    let previous: Route = 'turn';
    client.setRequests([
      {
        setupRequest: (req) => {
          const b: BuiltRequest = traffic.next();
          previous = current;
          current = b.route;
          sent++;
          req.method = b.method;
          req.path = b.path;
          req.body = b.body ?? '';
          // Fresh headers each time: autocannon writes Content-Length into the headers object it
          // was given, which would otherwise carry a POST's length over to the next GET.
          req.headers =
            b.body === undefined ? { authorization } : { authorization, 'content-type': JSON_TYPE };
          return req;
        },
        onResponse: (status, body) => readBody(current, status, body, tallies[current]),
      },
    ]);
    client.on('response', (status, _bytes, responseTime) => {
      tallies[current].ms.push(responseTime);
      if (status < 200 || status > 299) bump(tallies[current].statuses, String(status));
    });
    // autocannon has already sent the next request on the remade connection: `previous` timed out
    client.on('timeout', () => {
      tallies[previous].timeouts++;
      timeouts++;
    });
    client.on('connError', () => {
      tallies[current].socketErrors++;
      socketErrors++;
    });
  };

  const t0 = performance.now();
  const ticker = setInterval(() => {
    const done = ROUTES.reduce((n, r) => n + tallies[r].ms.length, 0);
    const s = (performance.now() - t0) / 1000;
    progress(`  ${o.label}: ${s.toFixed(0)} s, ${done} responses (${(done / s).toFixed(0)}/s)`);
  }, 5000);
  let ac: AcResult;
  try {
    ac = await autocannon({
      url: o.url,
      connections: o.connections,
      duration: o.durationS,
      timeout: o.timeoutS ?? REQUEST_TIMEOUT_S,
      pipelining: 1,
      setupClient,
    });
  } finally {
    clearInterval(ticker);
  }

  const routes = Object.fromEntries(ROUTES.map((r) => [r, summarize(r, tallies[r])])) as Record<
    Route,
    RouteResult
  >;
  const all = ROUTES.flatMap((r) => tallies[r].ms);
  const answered = all.length;
  const errors = ROUTES.reduce((n, r) => n + routes[r].errors, 0);
  return {
    connections: o.connections,
    durationS: ac.duration,
    rps: answered / ac.duration,
    routes,
    total: {
      count: answered,
      latency: stats(all),
      errors,
      lost: Math.max(0, sent - answered - timeouts - socketErrors - o.connections),
    },
    autocannon: {
      responses: ac.requests.total,
      errors: ac.errors,
      timeouts: ac.timeouts,
      non2xx: ac.non2xx,
      latencyP50: ac.latency.p50,
      latencyP99: ac.latency.p99,
    },
  };
}
