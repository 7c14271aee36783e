import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { EngineError } from '../domain/errors.js';
import { isLoopback } from './host-policy.js';

/** A GET that failed for a reason the probe reports as its error code. */
export class HttpProbeFailure extends Error {
  constructor(
    readonly code: 'TIMEOUT' | 'TOO_LARGE' | 'NOT_ALLOWED' | 'CONNECTION_FAILED',
    message: string,
  ) {
    super(message);
  }
}

export interface HttpGetOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Resolved addresses must all be loopback (a host allowed only for being `localhost`). */
  loopbackOnly: boolean;
  lookup?: LookupFunction;
}

type LookupCallback = Parameters<LookupFunction>[2];

function guardedLookup(base: LookupFunction, loopbackOnly: boolean): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, ((err, address, family) => {
      if (err === null && loopbackOnly) {
        const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
        if (!all.every((a) => isLoopback(a))) {
          callback(
            new HttpProbeFailure('NOT_ALLOWED', `${hostname} resolved to a non-loopback address`),
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

/** One GET with a deadline over the whole exchange (connect, headers and body). */
export function httpGet(
  url: URL,
  options: HttpGetOptions,
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
      { method: 'GET', agent: false, lookup, headers: { 'user-agent': 'memledger-probe' } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            finish(new HttpProbeFailure('TOO_LARGE', `the body is over ${options.maxBytes} bytes`));
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
      () =>
        finish(
          new HttpProbeFailure('TIMEOUT', `no complete answer within ${options.timeoutMs} ms`),
        ),
      options.timeoutMs,
    );
    req.on('error', (err) => finish(err));
    req.end();
  });
}
