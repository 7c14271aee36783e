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
 * A `timeout` is the request that was in flight before autocannon remade the connection (and, if
 * its quota let it, sent the next), a `connError` the one in flight. Requests sent and not
 * answered, beyond the one a connection may still have in flight when the run stops, are lost.
 *
 * Closed loop or paced. With no `rate`, each connection sends its next request as soon as the
 * last is answered, so `connections` requests are always in flight and the run finds the most the
 * server can answer. With `rate` R, autocannon's `overallRate` caps what is sent (each connection
 * a whole-number quota per window, bench/support/serve-autocannon.ts) and, unless `alignedWindows`,
 * the windows are staggered: connection i's window opens at frac(i x 0.618) of the window (a
 * low-discrepancy spread, so the connections with one more in their quota are spread too), and
 * when R < connections a window lasts ceil(connections / R) s with R x that many requests in it,
 * so every connection takes part. Whether it paced is measured, not assumed: requests written per
 * second (against R), the most in flight at once, and the busiest 100 ms of sending. A request
 * the quota held back is never sent late (autocannon does not catch up), so a server slower than R
 * shows as fewer sent than offered, not as latency: the report flags a rate that was not met.
 */
import { performance } from 'node:perf_hooks';
import { progress } from './progress.js';
import {
  autocannon,
  isPaused,
  staggerWindows,
  type AcClient,
  type AcResult,
} from './serve-autocannon.js';
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

/** How a paced run was paced. */
export interface Pacing {
  /** The offered rate, requests per second. */
  offeredRps: number;
  /** `staggered`: each connection's window at its own phase; `aligned`: autocannon's own. */
  windows: 'staggered' | 'aligned';
  windowS: number;
  /** The `overallRate` handed to autocannon (offered rate x window). */
  overallRate: number;
  /** Requests per connection per window, fewest and most. */
  quota: { min: number; max: number };
}

export interface RunResult {
  /** Connections autocannon made (it makes R when a rate R is below the asked-for count). */
  connections: number;
  /** Seconds, as autocannon measured the run. */
  durationS: number;
  /** Responses received per second, every route. */
  rps: number;
  /** Requests written per second while the run lasted (not those written as it stopped). */
  sentRps: number;
  /** null for a closed-loop run. */
  pacing: Pacing | null;
  /** Requests in flight: the most at once, and the mean (throughput x mean latency, Little). */
  inFlight: { peak: number; mean: number };
  /** Requests written per 100 ms slice of the run: the mean and the busiest slice. */
  sendsPer100ms: { mean: number; max: number };
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
  /** Offered requests per second, all connections together; none: closed loop. */
  rate?: number;
  /** Leave autocannon's windows as they are (all opening at once): to see what that does. */
  alignedWindows?: boolean;
}

/** The conjugate golden ratio: frac(i x PHI) spreads any run of connections evenly. */
const PHI = (Math.sqrt(5) - 1) / 2;

function pacingOf(o: LoadOptions): Pacing | null {
  if (o.rate === undefined) return null;
  const aligned = o.alignedWindows === true;
  const windowS = !aligned && o.rate < o.connections ? Math.ceil(o.connections / o.rate) : 1;
  const overallRate = o.rate * windowS;
  const made = Math.min(o.connections, overallRate);
  return {
    offeredRps: o.rate,
    windows: aligned ? 'aligned' : 'staggered',
    windowS,
    overallRate,
    quota: { min: Math.floor(overallRate / made), max: Math.ceil(overallRate / made) },
  };
}

/** Runs the mix against `url` for `durationS` seconds and tallies it per route. */
export async function runLoad(o: LoadOptions): Promise<RunResult> {
  const tallies = Object.fromEntries(ROUTES.map((r) => [r, emptyTally()])) as Record<
    Route,
    RouteTally
  >;
  const pacing = pacingOf(o);
  let sent = 0;
  let answered = 0;
  let timeouts = 0;
  let socketErrors = 0;
  let clients = 0;
  let peakInFlight = 0;
  /** When each request was written, ms after t0. */
  const sendTimes: number[] = [];
  /** Per connection: requests written and not yet answered, timed out or failed. */
  const open: number[] = [];
  let t0 = performance.now();

  const setupClient = (client: AcClient): void => {
    const index = clients++;
    const traffic = connectionTraffic(o.fixture, index, o.seed);
    open[index] = 0;
    const settled = (): void => {
      open[index] = (open[index] ?? 0) - 1;
    };
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
    client.on('request', () => {
      sent++;
      open[index] = (open[index] ?? 0) + 1;
      sendTimes.push(performance.now() - t0);
      peakInFlight = Math.max(peakInFlight, sent - answered - timeouts - socketErrors);
    });
    client.on('response', (status, _bytes, responseTime) => {
      answered++;
      settled();
      tallies[current].ms.push(responseTime);
      if (status < 200 || status > 299) bump(tallies[current].statuses, String(status));
    });
    // Fired after the connection is remade: if its quota let it send the next request, that one
    // is `current` and `previous` timed out; if the quota held it back, `current` timed out.
    client.on('timeout', () => {
      tallies[isPaused(client) ? current : previous].timeouts++;
      timeouts++;
      settled();
    });
    client.on('connError', () => {
      tallies[current].socketErrors++;
      socketErrors++;
      settled();
    });
    if (pacing?.windows === 'staggered') {
      const windowMs = pacing.windowS * 1000;
      staggerWindows(client, ((index * PHI) % 1) * windowMs, windowMs);
    }
  };

  t0 = performance.now();
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
      ...(pacing === null
        ? {}
        : { overallRate: pacing.overallRate, ignoreCoordinatedOmission: true }),
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
  const errors = ROUTES.reduce((n, r) => n + routes[r].errors, 0);
  const latency = stats(all);
  const rps = all.length / ac.duration;
  const slices = new Array<number>(Math.max(1, Math.floor(ac.duration * 10))).fill(0);
  for (const t of sendTimes) {
    const i = Math.floor(t / 100);
    if (i < slices.length) slices[i] = (slices[i] ?? 0) + 1;
  }
  const stillOpen = open.filter((n) => n > 0).length;
  return {
    connections: clients,
    durationS: ac.duration,
    rps,
    sentRps: sendTimes.filter((t) => t < 1000 * ac.duration).length / ac.duration,
    pacing,
    inFlight: { peak: peakInFlight, mean: (rps * latency.mean) / 1000 },
    sendsPer100ms: {
      mean: slices.reduce((a, b) => a + b, 0) / slices.length,
      max: Math.max(...slices),
    },
    routes,
    total: {
      count: all.length,
      latency,
      errors,
      lost: Math.max(0, sent - all.length - timeouts - socketErrors - stillOpen),
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
