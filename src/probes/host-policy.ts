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
