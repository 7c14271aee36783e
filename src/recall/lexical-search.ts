import { analyze } from '../domain/text/analyze.js';
import type {
  CorpusStats,
  LexicalIndexPort,
  RecalledTurn,
  TermStat,
  TurnMeta,
} from '../domain/recall-index.js';
import {
  DEFAULT_RANK_PARAMS,
  feedbackWeights,
  scoreRound,
  smoothedTop,
  topKeys,
  type RankParams,
} from './lexical-rank.js';
import { readPostings, type SearchState } from './posting-reader.js';
import { dateMatches, queryCues, TIME_TERMS } from './query-cues.js';
import { SessionNumbers } from './session-numbers.js';

/** How one lexical search runs: its scope, size, parameters, and what the caller already read. */
export interface LexicalSearchOptions {
  /** Only turns of this session. */
  session?: string;
  /** How many turns to return. */
  limit: number;
  params?: Partial<RankParams>;
  /** The query's analysed terms, when the caller already has them. */
  terms?: readonly string[];
  /** Extra analysed terms and their weights (a query term weighs 1 per occurrence). */
  expansions?: ReadonlyMap<string, number>;
  /** Corpus and term statistics the caller already read for these query terms. */
  lookup?: { corpus: CorpusStats; terms: Map<string, TermStat> };
}

/** A ranked turn: where it is, its score, and its row. */
export interface ScoredTurn {
  session: string;
  seq: number;
  score: number;
  turn: RecalledTurn;
}

/** Ranks a subject's turns for a query. Read-only: every call goes through the port's reads. */
export async function lexicalSearch(
  port: LexicalIndexPort,
  query: string,
  options: LexicalSearchOptions,
): Promise<ScoredTurn[]> {
  const p: RankParams = { ...DEFAULT_RANK_PARAMS, ...options.params };
  const queryTerms = options.terms ?? analyze(query);
  if (queryTerms.length === 0 || options.limit <= 0) return [];
  const weights = new Map<string, number>();
  for (const t of queryTerms) weights.set(t, (weights.get(t) ?? 0) + 1);
  for (const [t, w] of options.expansions ?? []) if (!weights.has(t) && w > 0) weights.set(t, w);

  const { corpus, terms: stats } = options.lookup ?? (await port.lookup([...weights.keys()]));
  if (corpus.turns === 0) return [];
  const st: SearchState = {
    port,
    stats,
    corpusTurns: corpus.turns,
    scope: options.session,
    budget: p.postingBudget,
    candidateSessions: p.candidateSessions,
    numbers: new SessionNumbers(),
    postings: new Map(),
    complete: new Set(),
    sessions: new Map(),
  };
  const round = (): Map<number, number> =>
    scoreRound(
      {
        weights,
        corpus,
        termStats: stats,
        postings: st.postings,
        complete: st.complete,
        sessions: st.sessions,
      },
      p,
    );
  await readPostings(st, [...weights.keys()]);
  let scores = round();
  if (scores.size === 0) return [];

  const metaCache = new Map<number, TurnMeta>();
  const meta = async (docs: readonly number[], withTerms: boolean): Promise<void> => {
    const missing = docs.filter(
      (d) => !metaCache.has(d) || (withTerms && metaCache.get(d)?.terms.length === 0),
    );
    if (missing.length === 0) return;
    const keys = missing.map((d) => st.numbers.key(d));
    for (const m of await port.turns(keys, withTerms)) {
      metaCache.set(st.numbers.doc(m.session, m.seq), m);
    }
  };

  if (p.feedbackDocs > 0 && p.feedbackTerms > 0 && p.feedbackWeight > 0) {
    const top = topKeys(scores, p.feedbackDocs, st.numbers.compare);
    await meta(top, true);
    // speakers' names are everywhere in a conversation: they would only pull in its other turns
    const exclude = new Set(weights.keys());
    for (const d of top) {
      const speaker = metaCache.get(d)?.turn.speaker;
      if (speaker) for (const t of analyze(speaker)) exclude.add(t);
    }
    const extra = feedbackWeights(
      top.map((d) => ({ score: scores.get(d) ?? 0, terms: metaCache.get(d)?.terms ?? [] })),
      exclude,
      p,
    );
    if (extra.size > 0) {
      for (const [t, s] of (await port.lookup([...extra.keys()])).terms) stats.set(t, s);
      await readPostings(st, [...extra.keys()]);
      for (const [t, w] of extra) weights.set(t, w);
      scores = round();
    }
  }

  // the boost pool: the best turns after smoothing, with their smoothed scores
  scores = smoothedTop(
    scores,
    st.sessions,
    Math.max(p.boostPool, options.limit),
    st.numbers.compare,
    p,
  );
  const pool = [...scores.keys()];
  const cues = queryCues(query);
  // terms only when a time word can matter: a "when" question
  await meta(pool, cues.temporal && p.timeWordBoost !== 1);
  const queryWords = new Set(query.toLowerCase().match(/[a-z]+/g) ?? []);
  const firstName = (m: TurnMeta | undefined): string | undefined =>
    m?.turn.speaker?.trim().split(/\s+/)[0]?.toLowerCase();
  const named = new Set<string>();
  for (const d of pool) {
    const first = firstName(metaCache.get(d));
    if (first !== undefined && queryWords.has(first)) named.add(first);
  }
  const onlyNamed = named.size === 1 ? [...named][0] : undefined;
  const boosted = new Map<number, number>();
  for (const d of pool) {
    const m = metaCache.get(d);
    // a neighbour the smoothing reached past a session's last turn is not a turn
    if (m === undefined) continue;
    let s = scores.get(d) ?? 0;
    if (onlyNamed !== undefined && firstName(m) === onlyNamed) s *= p.speakerBoost;
    if (cues.temporal && m.terms.some((t) => TIME_TERMS.has(t))) s *= p.timeWordBoost;
    if (dateMatches(cues, m.turn.recordedAt)) s *= p.dateBoost;
    boosted.set(d, s);
  }
  // ties in score fall back to the session id and seq, the same on every engine
  const out: ScoredTurn[] = [];
  for (const d of topKeys(boosted, options.limit, st.numbers.compare)) {
    const m = metaCache.get(d);
    if (m !== undefined)
      out.push({ ...st.numbers.key(d), score: boosted.get(d) ?? 0, turn: m.turn });
  }
  return out;
}
