import { percentile } from '../../eval/percentile.js';

export { percentile };

/** The median; the mean of the middle two for an even count (NaN when empty). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

/** A latency summary in the unit of the samples. */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles, the maximum and the mean of `xs`. */
export function stats(xs: readonly number[]): Stats {
  return {
    n: xs.length,
    p50: percentile(xs, 0.5),
    p95: percentile(xs, 0.95),
    p99: percentile(xs, 0.99),
    max: xs.reduce((a, b) => Math.max(a, b), xs.length === 0 ? NaN : -Infinity),
    mean: xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length),
  };
}
