/**
 * A benchmark that cannot produce an honest figure (bad arguments, a store seeded wrong, a mix
 * that missed its verdicts) stops with this; each bench's `main` prints its message.
 */
export class BenchError extends Error {
  override readonly name = 'BenchError';
}
