import { BenchError } from './bench-error.js';

/** The `i`-th element of `list`, wrapping around (a BenchError for an empty list). */
export function cyclic<T>(list: readonly T[], i: number): T {
  const v = list[i % list.length];
  if (v === undefined) throw new BenchError(`empty list at ${i}`);
  return v;
}
