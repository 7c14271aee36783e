/**
 * The part of autocannon 9 (node_modules/autocannon/README.md) that bench:serve uses, typed here
 * because the package ships no types. Loaded with `createRequire`, as autocannon is CommonJS.
 *
 * Pacing (`overallRate`), as autocannon 9.0.0 does it (lib/run.js, lib/httpClient.js): the rate
 * is split into a whole-number quota per connection (R / N, the first R mod N connections one
 * more), and each connection sends up to its quota per one-second window, back to back as the
 * answers come in, then waits for its window to reopen. The windows of all N connections open
 * together (each connection's timer starts when it is made, all in one loop), so every second
 * starts with N requests at once and, below capacity, the server idles for the rest of it: at
 * 64 connections the p95 is the time to drain that burst, about what it is with no pacing at all.
 * And when R < N, autocannon silently runs R connections instead of N. `staggerWindows` below
 * fixes both, from outside: it moves each connection's window to its own phase of the second.
 */
import { createRequire } from 'node:module';

/** One request as `setupRequest` receives and returns it. */
export interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A request of the sequence a client loops over. */
export interface AcRequestSpec extends AcRequest {
  setupRequest?: (req: AcRequest, context: Record<string, unknown>) => AcRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}

/** One connection of the run (the README's `Client` API). */
export interface AcClient {
  setRequests(requests: AcRequestSpec[]): void;
  /** A completed response: status, bytes, ms from the request's write to the response's end. */
  on(
    event: 'response',
    fn: (status: number, bytes: number, responseTime: number) => void,
  ): AcClient;
  /** The request in flight got no answer within the timeout; the connection is remade. */
  on(event: 'timeout', fn: () => void): AcClient;
  /** The socket failed; the connection is remade. */
  on(event: 'connError', fn: (err: Error) => void): AcClient;
  /** A request is about to be written (emitted before `setupRequest` builds the one after it). */
  on(event: 'request', fn: () => void): AcClient;
}

export interface AcOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Seconds to wait for one response. */
  timeout: number;
  pipelining: 1;
  /** Requests per second from all connections together (see the top of this file). */
  overallRate?: number;
  /**
   * Off by default when a rate is set: autocannon then adds made-up samples to its own latency
   * histogram (with an expected interval of ceil(1 / quota) = 1 ms); bench:serve keeps its own.
   */
  ignoreCoordinatedOmission?: boolean;
  headers?: Record<string, string>;
  setupClient?: (client: AcClient) => void;
}

/** The fields of autocannon's result that the bench reads. */
export interface AcResult {
  /** Seconds. */
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  requests: { total: number; average: number };
  latency: { p50: number; p99: number; average: number; max: number };
}

export interface AcInstance extends PromiseLike<AcResult> {
  stop(): void;
}

type Autocannon = (opts: AcOptions) => AcInstance;

const require = createRequire(import.meta.url);

/** Starts a run; the instance resolves with the result when the duration is over. */
export const autocannon = require('autocannon') as Autocannon;

/** autocannon's version, for the report. */
export const AUTOCANNON_VERSION = (require('autocannon/package.json') as { version: string })
  .version;

/** The Client fields of autocannon 9.0.0 that its rate limit runs on (lib/httpClient.js). */
interface RateInternals {
  rate?: number;
  reqsMadeThisSecond?: number;
  paused?: boolean;
  destroyed?: boolean;
  rateInterval?: ReturnType<typeof setInterval>;
  _doRequest?: () => void;
}

/** True when the connection's last attempt to send was held back by its rate quota. */
export function isPaused(client: AcClient): boolean {
  return (client as unknown as RateInternals).paused === true;
}

/**
 * Moves a paced connection's window from the phase every connection shares to `offsetMs` into
 * the run, and makes it `windowMs` long. Called from `setupClient`, which autocannon runs in the
 * Client's constructor after its quota is set and before its first request and its window timer:
 * the first request is held back (quota spent), and once the constructor is done the window
 * timer is replaced by one that opens at `offsetMs`, then every `windowMs`, doing what
 * autocannon's does (quota back to zero; send if the connection was held back). autocannon's
 * `destroy()` at the end of the run clears the timer it finds in `rateInterval`, i.e. this one.
 */
export function staggerWindows(client: AcClient, offsetMs: number, windowMs: number): void {
  const c = client as unknown as RateInternals;
  if (
    typeof c.rate !== 'number' ||
    typeof c.reqsMadeThisSecond !== 'number' ||
    typeof c._doRequest !== 'function'
  ) {
    throw new Error(
      `autocannon ${AUTOCANNON_VERSION}: the Client has no rate quota to stagger ` +
        '(staggerWindows is written against autocannon 9.0.0 with overallRate set)',
    );
  }
  c.reqsMadeThisSecond = Number.POSITIVE_INFINITY;
  const open = (): void => {
    if (c.destroyed === true) return;
    c.reqsMadeThisSecond = 0;
    if (c.paused === true) c._doRequest?.();
    c.paused = false;
  };
  queueMicrotask(() => {
    if (c.rateInterval === undefined)
      throw new Error('autocannon: a paced Client has no window timer');
    clearInterval(c.rateInterval);
    setTimeout(() => {
      if (c.destroyed === true) return;
      open();
      c.rateInterval = setInterval(open, windowMs);
    }, offsetMs).unref();
  });
}
