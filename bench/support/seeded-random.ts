/**
 * A seeded generator of numbers in [0, 1) (mulberry32), so a run's random choices (the kill
 * moments of bench:crash) come back with the same `--seed`.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number of milliseconds drawn evenly from [min, max]. */
export function between(random: () => number, min: number, max: number): number {
  return Math.round(min + random() * (max - min));
}
