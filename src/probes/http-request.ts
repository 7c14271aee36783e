import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { EngineError } from '../domain/errors.js';
import { isLoopback } from './host-policy.js';

/** Why an exchange gave no answer; the http probe records these as its error codes. */
export type HttpFailureCode = 'TIMEOUT' | 'TOO_LARGE' | 'NOT_ALLOWED' | 'CONNECTION_FAILED';

/** The end of one exchange: an answer of any status (redirects are answers), or a failure. */
export type HttpExchange =
  | { kind: 'answered'; status: number; body: Buffer }
  | { kind: 'failed'; code: HttpFailureCode; message: string; cause?: unknown };

export interface HttpRequestOptions {
  method: 'GET' | 'POST';
  userAgent: string;
  /** Sent with its `content-type` and `content-length`; none for a GET. */
  body?: { contentType: string; data: string };
  timeoutMs: number;
  /** A longer answer body is a TOO_LARGE failure, not a partial answer. */
  maxBytes: number;
  /** Resolved addresses must all be loopback (a host allowed only for being `localhost`). */
  loopbackOnly: boolean;
  lookup?: LookupFunction;
}

class Failure extends Error {
  constructor(
    readonly code: HttpFailureCode,
    message: string,
  ) {
    super(message);
  }
}

type LookupCallback = Parameters<LookupFunction>[2];

function guardedLookup(base: LookupFunction, loopbackOnly: boolean): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, ((err, address, family) => {
      if (err === null && loopbackOnly) {
        const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
        if (!all.every((a) => isLoopback(a))) {
          callback(
            new Failure('NOT_ALLOWED', `${hostname} resolved to a non-loopback address`),
            address,
            family,
          );
          return;
        }
      }
      callback(err, address, family);
    }) as LookupCallback);
  };
}

function headersFor(options: HttpRequestOptions): Record<string, string | number> {
  const { body } = options;
  return body === undefined
    ? { 'user-agent': options.userAgent }
    : {
        'user-agent': options.userAgent,
        'content-type': body.contentType,
        'content-length': Buffer.byteLength(body.data),
      };
}

function exchange(
  url: URL,
  options: HttpRequestOptions,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const lookup = guardedLookup(
      options.lookup ?? (dnsLookup as LookupFunction),
      options.loopbackOnly,
    );
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    // Every event below arrives asynchronously, after `req` and `timer` exist.
    function finish(err: Error | null, value?: { status: number; body: Buffer }): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err === null && value !== undefined) resolve(value);
      else reject(err ?? new EngineError('INTERNAL', 'the request ended without a response'));
      req.destroy();
    }
    const req = client.request(
      url,
      { method: options.method, agent: false, lookup, headers: headersFor(options) },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            finish(new Failure('TOO_LARGE', `the body is over ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks) }),
        );
        res.on('error', (err) => finish(err));
      },
    );
    const timer = setTimeout(
      () => finish(new Failure('TIMEOUT', `no complete answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    req.on('error', (err) => finish(err));
    req.end(options.body?.data);
  });
}

/**
 * One request with a deadline over the whole exchange (connect, send, headers and body), no
 * redirects followed, no connection reused. It never rejects: a failure is a value.
 */
export async function httpRequest(url: URL, options: HttpRequestOptions): Promise<HttpExchange> {
  try {
    return { kind: 'answered', ...(await exchange(url, options)) };
  } catch (err) {
    if (err instanceof Failure) return { kind: 'failed', code: err.code, message: err.message };
    const code = (err as NodeJS.ErrnoException).code;
    const message = `${(err as Error).message}${code === undefined ? '' : ` (${code})`}`;
    return { kind: 'failed', code: 'CONNECTION_FAILED', message, cause: err };
  }
}
