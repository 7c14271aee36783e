import { isIP } from 'node:net';

/** `[::1]` → `::1`; hostnames compare in lower case without a trailing dot. */
export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = bareHost(host);
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  // URL parsing already compresses every spelling of the IPv6 loopback to `::1`.
  return h === '::1';
}

/**
 * Whether an http probe may contact `hostname`; decided from the URL alone, before any lookup or
 * connection. Loopback is always allowed; anything else only by exact name in the allowlist.
 */
export function hostAllowed(hostname: string, allowlist: readonly string[]): boolean {
  const h = bareHost(hostname);
  return isLoopback(h) || allowlist.some((a) => bareHost(a) === h);
}

/** Why a URL may not be contacted (`host`: neither loopback nor allowlisted). */
export const HTTP_TARGET_REFUSALS = ['malformed', 'scheme', 'credentials', 'host'] as const;
export type HttpTargetRefusal = (typeof HTTP_TARGET_REFUSALS)[number];

/** A URL judged from its text alone: where to connect and how to guard the lookup, or why not. */
export type HttpTarget =
  | {
      kind: 'allowed';
      url: URL;
      host: string;
      /** Resolved addresses must all be loopback (a host allowed only for being `localhost`). */
      loopbackOnly: boolean;
    }
  | { kind: 'refused'; reason: HttpTargetRefusal; url: URL | null; host: string | null };

/**
 * The outbound policy of the http probe and the servers' notices: http or https, no credentials,
 * a loopback or allowlisted host. Decided before any lookup or connection.
 */
export function httpTarget(raw: string, allowlist: readonly string[]): HttpTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { kind: 'refused', reason: 'malformed', url: null, host: null };
  }
  const host = bareHost(url.hostname);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { kind: 'refused', reason: 'scheme', url, host };
  }
  if (url.username !== '' || url.password !== '') {
    return { kind: 'refused', reason: 'credentials', url, host };
  }
  if (!hostAllowed(host, allowlist)) return { kind: 'refused', reason: 'host', url, host };
  // `localhost` is allowed for being loopback, so it must resolve to loopback too.
  const loopbackOnly = isLoopback(host) && !allowlist.some((a) => bareHost(a) === host);
  return { kind: 'allowed', url, host, loopbackOnly };
}
