/**
 * Lexical ranking for recall, pure: BM25 over turns expanded with their neighbours, a session
 * score, pseudo-relevance feedback, neighbour smoothing and three boosts (speaker named in the
 * query, time words for "when" questions, a session date the query names). The numbers below
 * were chosen on the LoCoMo dev conversations; the ablation is in docs/RECALL.md.
 */

export interface RankParams {
  k1: number;
  b: number;
  /** Okapi IDF can go negative for terms in most documents; it never drops below this. */
  idfFloor: number;
  /** Weight of the previous turn's terms in a turn's expanded document. */
  prevWeight: number;
  /** Weight of the next turn's terms in a turn's expanded document. */
  nextWeight: number;
  /** Weight of the session's own BM25 score, relative to the best turn score. */
  sessionWeight: number;
  /** Share of the better neighbour's score a turn inherits. */
  smoothing: number;
  feedbackDocs: number;
  feedbackTerms: number;
  feedbackWeight: number;
  speakerBoost: number;
  timeWordBoost: number;
  dateBoost: number;
}

export const DEFAULT_RANK_PARAMS: RankParams = {
  k1: 1.2,
  b: 0.6,
  idfFloor: 1.25,
  prevWeight: 1.0,
  nextWeight: 0.3,
  sessionWeight: 0.3,
  smoothing: 0.5,
  // off: on the dev conversations feedback cost 0.3 points of turn any@10 (docs/RECALL.md)
  feedbackDocs: 0,
  feedbackTerms: 10,
  feedbackWeight: 0.2,
  speakerBoost: 1.5,
  timeWordBoost: 1.2,
  dateBoost: 2,
};

/** One turn holding a term: where it is, how often the term occurs, how long the turn is. */
export interface Posting {
  session: string;
  seq: number;
  tf: number;
  len: number;
}

export interface TermStat {
  /** Turns holding the term. */
  df: number;
  /** Sessions holding the term. */
  sdf: number;
}

export interface CorpusStats {
  turns: number;
  sessions: number;
  /** Sum of every turn's length in terms. */
  totalLen: number;
}

export interface SessionStat {
  turns: number;
  len: number;
}

/**
 * What one scoring round sees. `postings` is complete for the terms in `complete`; for the
 * others it holds only the candidate sessions (the pruning that keeps a large store fast).
 */
export interface RoundInput {
  weights: ReadonlyMap<string, number>;
  corpus: CorpusStats;
  termStats: ReadonlyMap<string, TermStat>;
  postings: ReadonlyMap<string, readonly Posting[]>;
  complete: ReadonlySet<string>;
  sessions: ReadonlyMap<string, SessionStat>;
}

export const docKey = (session: string, seq: number): string => `${session}\u0000${seq}`;

export function idf(n: number, df: number, floor: number): number {
  return Math.max(floor, Math.log((n - df + 0.5) / (df + 0.5)));
}

/** How much bigger a restricted term's expanded df is taken to be than its df. */
const EXPANSION_ESTIMATE = 2.2;

interface Expanded {
  tf: number;
}

/**
 * Scores every turn the query's postings reach (and their neighbours): expanded-document BM25
 * plus the weighted session score. Returns scores by doc key.
 */
export function scoreRound(
  input: RoundInput,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<string, number> {
  const { corpus } = input;
  const avgLen = corpus.turns === 0 ? 1 : corpus.totalLen / corpus.turns;
  const expansion = 1 + p.prevWeight + p.nextWeight;
  const avgLenX = avgLen * expansion;
  const avgSessionLen = corpus.sessions === 0 ? 1 : corpus.totalLen / corpus.sessions;
  const lens = new Map<string, number>();
  for (const list of input.postings.values()) {
    for (const x of list) lens.set(docKey(x.session, x.seq), x.len);
  }
  const lenOf = (session: string, seq: number): number => {
    const s = input.sessions.get(session);
    if (s !== undefined && (seq < 1 || seq > s.turns)) return 0;
    return lens.get(docKey(session, seq)) ?? avgLen;
  };

  const turnScores = new Map<string, number>();
  const sessionScores = new Map<string, number>();
  for (const [term, weight] of input.weights) {
    const list = input.postings.get(term) ?? [];
    const stat = input.termStats.get(term);
    if (list.length === 0 || stat === undefined) continue;
    // expanded term frequency of every turn this term reaches
    const ex = new Map<string, Expanded & { session: string; seq: number }>();
    const add = (session: string, seq: number, tf: number): void => {
      const s = input.sessions.get(session);
      if (seq < 1 || (s !== undefined && seq > s.turns)) return;
      const key = docKey(session, seq);
      const cur = ex.get(key);
      if (cur === undefined) ex.set(key, { session, seq, tf });
      else cur.tf += tf;
    };
    const sessionTf = new Map<string, number>();
    for (const x of list) {
      add(x.session, x.seq, x.tf);
      if (p.prevWeight > 0) add(x.session, x.seq + 1, p.prevWeight * x.tf);
      if (p.nextWeight > 0) add(x.session, x.seq - 1, p.nextWeight * x.tf);
      sessionTf.set(x.session, (sessionTf.get(x.session) ?? 0) + x.tf);
    }
    const dfx = input.complete.has(term)
      ? ex.size
      : Math.min(corpus.turns, stat.df * EXPANSION_ESTIMATE);
    const w = weight * idf(corpus.turns, dfx, p.idfFloor);
    for (const [key, e] of ex) {
      const lenX =
        lenOf(e.session, e.seq) +
        p.prevWeight * lenOf(e.session, e.seq - 1) +
        p.nextWeight * lenOf(e.session, e.seq + 1);
      const norm = p.k1 * (1 - p.b + (p.b * lenX) / avgLenX);
      turnScores.set(key, (turnScores.get(key) ?? 0) + (w * e.tf * (p.k1 + 1)) / (e.tf + norm));
    }
    if (p.sessionWeight > 0) {
      const sw = weight * idf(corpus.sessions, stat.sdf, p.idfFloor);
      for (const [session, tf] of sessionTf) {
        const len = input.sessions.get(session)?.len ?? avgSessionLen;
        const norm = p.k1 * (1 - p.b + (p.b * len) / avgSessionLen);
        sessionScores.set(
          session,
          (sessionScores.get(session) ?? 0) + (sw * tf * (p.k1 + 1)) / (tf + norm),
        );
      }
    }
  }
  if (p.sessionWeight > 0 && sessionScores.size > 0 && turnScores.size > 0) {
    const maxTurn = Math.max(...turnScores.values());
    const maxSession = Math.max(...sessionScores.values());
    if (maxSession > 0) {
      for (const [key, score] of turnScores) {
        const { session } = splitKey(key);
        const s = sessionScores.get(session) ?? 0;
        turnScores.set(key, score + (p.sessionWeight * maxTurn * s) / maxSession);
      }
    }
  }
  return turnScores;
}

/** The best `n` keys by score, ties broken by key so every engine returns the same order. */
export function topKeys(scores: ReadonlyMap<string, number>, n: number): string[] {
  return [...scores.entries()]
    .sort(([ka, a], [kb, b]) => b - a || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .slice(0, n)
    .map(([k]) => k);
}

/**
 * Pseudo-relevance feedback (RM3-like): terms frequent in the best turns, weighted by those
 * turns' scores, added to the query at a fraction of an original term's weight.
 */
export function feedbackWeights(
  top: readonly { score: number; terms: readonly string[] }[],
  exclude: ReadonlySet<string>,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<string, number> {
  const total = top.reduce((s, d) => s + d.score, 0);
  if (total <= 0) return new Map();
  const w = new Map<string, number>();
  for (const d of top) {
    if (d.terms.length === 0) continue;
    const share = d.score / total / d.terms.length;
    for (const t of d.terms) if (!exclude.has(t)) w.set(t, (w.get(t) ?? 0) + share);
  }
  const best = topKeys(w, p.feedbackTerms);
  const max = best.length === 0 ? 0 : (w.get(best[0] as string) ?? 0);
  return new Map(best.map((t) => [t, (p.feedbackWeight * (w.get(t) ?? 0)) / max]));
}

/** Each turn keeps its score plus a share of its better neighbour's. */
export function smooth(
  scores: ReadonlyMap<string, number>,
  sessions: ReadonlyMap<string, SessionStat>,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<string, number> {
  if (p.smoothing <= 0) return new Map(scores);
  const out = new Map<string, number>();
  const at = (session: string, seq: number): number => scores.get(docKey(session, seq)) ?? 0;
  const visit = (session: string, seq: number): void => {
    const turns = sessions.get(session)?.turns ?? Number.MAX_SAFE_INTEGER;
    if (seq < 1 || seq > turns) return;
    const key = docKey(session, seq);
    if (out.has(key)) return;
    const s = at(session, seq) + p.smoothing * Math.max(at(session, seq - 1), at(session, seq + 1));
    if (s > 0) out.set(key, s);
  };
  for (const key of scores.keys()) {
    const { session, seq } = splitKey(key);
    // a turn with no score of its own still inherits from a scored neighbour
    visit(session, seq - 1);
    visit(session, seq);
    visit(session, seq + 1);
  }
  return out;
}

export function splitKey(key: string): { session: string; seq: number } {
  const cut = key.lastIndexOf('\u0000');
  return { session: key.slice(0, cut), seq: Number(key.slice(cut + 1)) };
}
