/**
 * The part of autocannon 9 (node_modules/autocannon/README.md) that bench:serve uses, typed here
 * because the package ships no types. Loaded with `createRequire`, as autocannon is CommonJS.
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
}

export interface AcOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Seconds to wait for one response. */
  timeout: number;
  pipelining: 1;
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
