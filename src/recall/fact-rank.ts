import type { FactStatus } from '../domain/fact.js';
import type { CorpusStats, RecalledFactRow, TermStat } from '../domain/recall-index.js';
import type { RecallSql } from '../store/recall-sql.js';
import { bm25Term, idf, type RankParams } from './lexical-rank.js';
import { isPrimary, SECONDARY_WEIGHT } from './recall-items.js';

const FACT_CANDIDATES = 200;
/** Facts are fetched by the query's rarer terms while their summed df stays under this. */
const FACT_TERM_BUDGET = 2000;

/**
 * Plain BM25 over a fact's terms, with the turn corpus's statistics; secondary facts discounted.
 * Candidates are the facts holding the query's rarer terms (ascending df, within a budget).
 */
export async function rankFacts(
  sql: RecallSql,
  query: ReadonlyMap<string, number>,
  lookup: { corpus: CorpusStats; terms: ReadonlyMap<string, TermStat> },
  statuses: readonly FactStatus[],
  session: string | null,
  p: RankParams,
): Promise<{ row: RecalledFactRow; score: number }[]> {
  if (query.size === 0) return [];
  const df = (t: string): number => lookup.terms.get(t)?.df ?? 0;
  const byRarity = [...query.keys()].sort((a, b) => df(a) - df(b) || (a < b ? -1 : 1));
  const pick: string[] = [];
  let used = 0;
  for (const t of byRarity) {
    if (pick.length > 0 && used + df(t) > FACT_TERM_BUDGET) break;
    pick.push(t);
    used += df(t);
  }
  const rows = await sql.factCandidates(pick, statuses, session, FACT_CANDIDATES);
  const n = Math.max(lookup.corpus.turns, 1);
  const avgLen = lookup.corpus.turns === 0 ? 8 : lookup.corpus.totalLen / lookup.corpus.turns;
  return rows
    .map((row) => {
      const tf = new Map<string, number>();
      for (const t of row.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      let score = 0;
      for (const [term, weight] of query) {
        const f = tf.get(term) ?? 0;
        if (f === 0) continue;
        score += bm25Term(weight * idf(n, df(term), p.idfFloor), f, row.terms.length, avgLen, p);
      }
      const primary = isPrimary(row.origin);
      return { row, primary, score: primary ? score : score * SECONDARY_WEIGHT };
    })
    .filter((s) => s.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.primary) - Number(a.primary) ||
        (a.row.id < b.row.id ? -1 : 1),
    );
}
