import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { countOccurrences, httpVerdict, type ProbeOutcome } from '../domain/probe.js';
import { httpTarget } from './host-policy.js';
import { httpRequest } from './http-request.js';
import { errorOutcome, type ProbeInstrument } from './instruments.js';

/** An http probe reads at most this much body; more is an error, not a partial answer. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpInstrumentOptions {
  /** Name resolution for allowed hosts (hosts that pin DNS; tests). Default `dns.lookup`. */
  lookup?: LookupFunction;
}

function needle(): string {
  return `memledger-needle-${randomBytes(12).toString('hex')}`;
}

/**
 * The built-in http instrument: GET only, to loopback or an allowlisted host (decided from the
 * URL before any lookup or connection), with one deadline over the whole exchange.
 */
export function createHttpInstrument(options: HttpInstrumentOptions = {}): ProbeInstrument {
  return {
    name: 'http',
    kind: 'http',
    fingerprint: 'memledger:http:1',
    async run(spec, ctx): Promise<ProbeOutcome> {
      if (spec.kind !== 'http') return errorOutcome('INSTRUMENT_FAILED', 'not an http probe');
      const target = httpTarget(spec.url, ctx.httpAllowlist);
      const asked = {
        url: spec.url,
        host: target.host,
        expectStatus: spec.status ?? null,
        contains: spec.contains ?? null,
      };
      if (target.kind === 'refused') {
        // A parsed spec is already http(s) without credentials; only the host can be refused.
        const why =
          target.reason === 'host'
            ? `${target.host} is neither loopback nor in the http allowlist`
            : `the URL is refused (${target.reason})`;
        return errorOutcome('NOT_ALLOWED', `${why}; no connection was made`, asked);
      }
      const answer = await httpRequest(target.url, {
        method: 'GET',
        userAgent: 'memledger-probe',
        timeoutMs: ctx.httpTimeoutMs,
        maxBytes: MAX_BODY_BYTES,
        loopbackOnly: target.loopbackOnly,
        ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      });
      if (answer.kind === 'failed') return errorOutcome(answer.code, answer.message, asked);
      const { status, body } = answer;
      const matchCount =
        spec.contains === undefined ? null : countOccurrences(body.toString('utf8'), spec.contains);
      return {
        verdict: httpVerdict(spec, { status, matchCount }),
        errorCode: null,
        evidence: { ...asked, status, bodyBytes: body.length, matchCount },
      };
    },
    async controls() {
      const present = needle();
      const server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`memledger probe control\n${present}\n`);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/control`;
      return {
        positive: { kind: 'http', url, status: 200, contains: present },
        negative: { kind: 'http', url, status: 200, contains: needle() },
        cleanup: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
  };
}
