import type { RecallItem } from './recall-types.js';

/** Reciprocal-rank fusion constant: the usual 60. */
const RRF_K = 60;

/**
 * Fuses ranked lists by weighted reciprocal rank (weight / (60 + rank)) and keeps the best `k`;
 * at equal score primary evidence comes first, then turns, then by id.
 */
export function fuse(
  lists: readonly { items: RecallItem[]; weight: number }[],
  k: number,
): RecallItem[] {
  const fused = new Map<string, RecallItem>();
  for (const { items, weight } of lists) {
    items.forEach((item, rank) => {
      const key = `${item.kind}:${item.id}`;
      const prev = fused.get(key);
      const score = (prev?.score ?? 0) + weight / (RRF_K + rank + 1);
      fused.set(key, { ...(prev ?? item), score });
    });
  }
  return [...fused.values()]
    .sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.passport.primary) - Number(a.passport.primary) ||
        (a.kind === b.kind ? 0 : a.kind === 'turn' ? -1 : 1) ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
    .slice(0, k);
}
