/**
 * A batch of proposals cites the same few turns again and again, and a text repeats its words:
 * the text layer's pure functions remember their results for the most recent inputs, each in a
 * bounded cache that is cleared when full.
 */
const CACHES: Array<Map<string, unknown>> = [];

/**
 * The longest input remembered. Recall analyses every turn as it is recorded (up to 1,000,000
 * characters each): remembering those would let a stream of long turns hold thousands of copies.
 */
const MAX_KEY_LENGTH = 8_192;

/** A remembered pure function of a string, keeping at most `limit` results of short inputs. */
export function memoized<T>(limit: number, compute: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  CACHES.push(cache as Map<string, unknown>);
  return (key) => {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (key.length > MAX_KEY_LENGTH) return value;
    if (cache.size >= limit) cache.clear();
    cache.set(key, value);
    return value;
  };
}

/** Forgets every remembered result (benchmarks start each round cold with it). */
export function resetTextMemo(): void {
  for (const cache of CACHES) cache.clear();
}
