/**
 * The bench README's metrics: turn any@k and frac@k (k = 5, 10, 20), and pair any@10 where a
 * memory is two adjacent turns of one session (turns 1-2, 3-4, …; an odd last turn alone).
 */
/** The depths turn any@k and frac@k are reported at. */
export const TURN_KS = [5, 10, 20] as const;
/** The depth pair any@k is reported at. */
export const PAIR_K = 10;

/** One question's evidence and what recall ranked for it. */
export interface QuestionResult {
  category: number;
  /** Evidence turns as `session:seq`. */
  evidence: readonly string[];
  /** Turns in rank order as `session:seq`, at least 2 × PAIR_K deep. */
  ranked: readonly string[];
}

/** The metrics over one group of questions. */
export interface MetricRow {
  label: string;
  questions: number;
  turnAny: Record<number, number>;
  turnFrac: Record<number, number>;
  pairAny10: number;
}

const pairOf = (key: string): string => {
  const [session, seq] = key.split(':');
  return `${session}:${Math.ceil(Number(seq) / 2)}`;
};

/** Pairs in rank order: a pair ranks where its better turn does. */
export function rankPairs(ranked: readonly string[], k: number): string[] {
  const out: string[] = [];
  for (const key of ranked) {
    const pair = pairOf(key);
    if (!out.includes(pair)) out.push(pair);
    if (out.length === k) break;
  }
  return out;
}

function row(label: string, results: readonly QuestionResult[]): MetricRow {
  const n = results.length;
  const turnAny: Record<number, number> = {};
  const turnFrac: Record<number, number> = {};
  for (const k of TURN_KS) {
    let any = 0;
    let frac = 0;
    for (const r of results) {
      const top = new Set(r.ranked.slice(0, k));
      const found = r.evidence.filter((e) => top.has(e)).length;
      if (found > 0) any += 1;
      frac += found / r.evidence.length;
    }
    turnAny[k] = n === 0 ? 0 : any / n;
    turnFrac[k] = n === 0 ? 0 : frac / n;
  }
  let pairHits = 0;
  for (const r of results) {
    const top = new Set(rankPairs(r.ranked, PAIR_K));
    if (r.evidence.some((e) => top.has(pairOf(e)))) pairHits += 1;
  }
  return { label, questions: n, turnAny, turnFrac, pairAny10: n === 0 ? 0 : pairHits / n };
}

/** One row per category, then categories 1–4 pooled, then all categories pooled. */
export function metricRows(results: readonly QuestionResult[]): MetricRow[] {
  const scored = results.filter((r) => r.evidence.length > 0);
  const categories = [...new Set(scored.map((r) => r.category))].sort((a, b) => a - b);
  return [
    ...categories.map((c) =>
      row(
        `category ${c}`,
        scored.filter((r) => r.category === c),
      ),
    ),
    row(
      'categories 1-4',
      scored.filter((r) => r.category >= 1 && r.category <= 4),
    ),
    row('all categories', scored),
  ];
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`.padStart(6);

/** The rows as a fixed-width table, one line per row under a header. */
export function formatRows(rows: readonly MetricRow[]): string {
  const head = `${'scope'.padEnd(16)} ${'n'.padStart(4)}  ${TURN_KS.map((k) => `any@${k}`.padStart(6)).join(' ')}  ${TURN_KS.map((k) => `frac@${k}`.padStart(7)).join(' ')}  pair@10`;
  const lines = rows.map(
    (r) =>
      `${r.label.padEnd(16)} ${String(r.questions).padStart(4)}  ${TURN_KS.map((k) => pct(r.turnAny[k] ?? 0)).join(' ')}  ${TURN_KS.map((k) => ` ${pct(r.turnFrac[k] ?? 0)}`).join(' ')}  ${pct(r.pairAny10)}`,
  );
  return [head, ...lines].join('\n');
}
