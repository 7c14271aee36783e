import { BenchError } from './bench-error.js';

/** A whole-number option of at least `min`; `name` is the option as typed, without `--`. */
export function positiveInt(name: string, value: string, min: number): number {
  const n = Number(value);
  if (Number.isInteger(n) && n >= min) return n;
  throw new BenchError(`--${name} must be a whole number >= ${min}`);
}
