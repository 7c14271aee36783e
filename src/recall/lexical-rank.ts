/**
 * Lexical ranking for recall, pure: BM25 over turns expanded with their neighbours, a session
 * score, pseudo-relevance feedback, neighbour smoothing and three boosts (speaker named in the
 * query, time words for "when" questions, a session date the query names), with a floor under
 * a turn's length. The numbers below were chosen on two development sets (LoCoMo's dev
 * conversations and bench/data/recall-dev), cross-validated by conversation; the ablation is in
 * docs/RECALL.md.
 */
import type { CorpusStats, SessionStat, TermStat } from '../domain/recall-index.js';

/** The knobs of the lexical ranking (and the weight of the vector lists in the fusion). */
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
  /**
   * A turn's expanded length is taken as at least this share of the average: a two-word reply
   * ("ha", "ok lol") is not scored as a denser match than the turn it answers.
   */
  lenFloor: number;
  feedbackDocs: number;
  feedbackTerms: number;
  feedbackWeight: number;
  speakerBoost: number;
  timeWordBoost: number;
  dateBoost: number;
  /** Best turns (after smoothing) that get the boosts; the rest cannot enter the answer. */
  boostPool: number;
  /**
   * Postings read in full per query (rarest terms first) before the commoner terms are read
   * only inside the candidate sessions: the pruning that bounds a large store's cost.
   */
  postingBudget: number;
  /** Sessions the commoner terms are read in: the best by the rarer terms' hits. */
  candidateSessions: number;
  /**
   * Weight of the vector lists (nearest turns, nearest facts) in the reciprocal-rank fusion,
   * where the lexical lists weigh 1. Used only when recall ranks by vectors.
   */
  vectorWeight: number;
}

/** The parameters recall ranks with unless a call overrides some. */
export const DEFAULT_RANK_PARAMS: RankParams = {
  k1: 1.2,
  b: 0.3,
  idfFloor: 1.25,
  prevWeight: 1.0,
  nextWeight: 0.3,
  sessionWeight: 0.3,
  smoothing: 0.75,
  lenFloor: 1.25,
  // off: on both development sets feedback cost 0.8 points of turn any@10 (docs/RECALL.md)
  feedbackDocs: 0,
  feedbackTerms: 10,
  feedbackWeight: 0.2,
  speakerBoost: 1.5,
  timeWordBoost: 1.4,
  dateBoost: 2,
  boostPool: 100,
  postingBudget: 800,
  candidateSessions: 16,
  vectorWeight: 1,
};

/**
 * A posting as the ranker holds it: the turn as one number (session index × SEQ_SPAN + seq),
 * so the hot loops key maps by numbers, not by built strings.
 */
export interface DocPosting {
  doc: number;
  tf: number;
  len: number;
}

/** Turns per session a doc number can address (4,194,304). */
export const SEQ_SPAN = 2 ** 22;
/** The doc number of a turn: its session's number and its seq. */
export const docOf = (session: number, seq: number): number => session * SEQ_SPAN + seq;
/** The session number a doc number holds. */
export const sessionOfDoc = (doc: number): number => Math.floor(doc / SEQ_SPAN);
/** The seq a doc number holds. */
export const seqOfDoc = (doc: number): number => doc % SEQ_SPAN;

/**
 * What one scoring round sees. `postings` is complete for the terms in `complete`; for the
 * others it holds only the candidate sessions (the pruning that keeps a large store fast).
 * Sessions are numbered; `sessions` is indexed by that number.
 */
export interface RoundInput {
  weights: ReadonlyMap<string, number>;
  corpus: CorpusStats;
  termStats: ReadonlyMap<string, TermStat>;
  postings: ReadonlyMap<string, readonly DocPosting[]>;
  complete: ReadonlySet<string>;
  sessions: ReadonlyMap<number, SessionStat>;
}

/** Okapi IDF of a term in `df` of `n` documents, never below `floor`. */
export function idf(n: number, df: number, floor: number): number {
  return Math.max(floor, Math.log((n - df + 0.5) / (df + 0.5)));
}

/**
 * One term's BM25 contribution to a document: its weight `w` (query weight × IDF) times the
 * term frequency `tf`, saturated by `k1`, the document's length `len` normalised by `avgLen`
 * through `b`. Turns, sessions and facts are all scored by it.
 */
export function bm25Term(
  w: number,
  tf: number,
  len: number,
  avgLen: number,
  p: Pick<RankParams, 'k1' | 'b'>,
): number {
  const norm = p.k1 * (1 - p.b + (p.b * len) / avgLen);
  return (w * tf * (p.k1 + 1)) / (tf + norm);
}

/** How much bigger a restricted term's expanded df is taken to be than its df. */
export const EXPANSION_ESTIMATE = 2.2;

/**
 * Scores every turn the query's postings reach (and their neighbours): expanded-document BM25
 * plus the weighted session score. Returns scores by doc number.
 *
 * Every doc a posting reaches (its own, the next and the previous turn) gets a slot once, with
 * its expanded length worked out once; each term then adds into typed arrays by slot. The sums
 * are made in the same order as term by term over maps would make them, so the scores are the
 * same to the bit (test/recall-rank.test.ts holds it against that plain form).
 */
export function scoreRound(
  input: RoundInput,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<number, number> {
  const { corpus } = input;
  const avgLen = corpus.turns === 0 ? 1 : corpus.totalLen / corpus.turns;
  const avgLenX = avgLen * (1 + p.prevWeight + p.nextWeight);
  const avgSessionLen = corpus.sessions === 0 ? 1 : corpus.totalLen / corpus.sessions;
  // the slots: every doc a posting names (with its length), then the docs the scored terms'
  // postings reach (their own, the next and the previous turn); a slot's length is NaN when no
  // posting names its doc (the average is taken for it, as for a doc no slot holds)
  const slotOf = new Map<number, number>();
  const docs: number[] = [];
  const lenAt: number[] = [];
  let lastSession = 0;
  const slot = (doc: number): number => {
    let s = slotOf.get(doc);
    if (s === undefined) {
      s = docs.length;
      slotOf.set(doc, s);
      docs.push(doc);
      lenAt.push(Number.NaN);
    }
    return s;
  };
  for (const list of input.postings.values()) for (const x of list) lenAt[slot(x.doc)] = x.len;
  const inSession = (doc: number): boolean => {
    const seq = seqOfDoc(doc);
    const s = input.sessions.get(sessionOfDoc(doc));
    return seq >= 1 && (s === undefined || seq <= s.turns);
  };
  const lenOf = (doc: number): number => {
    if (!inSession(doc)) return 0;
    const s = slotOf.get(doc);
    const len = s === undefined ? Number.NaN : (lenAt[s] as number);
    return Number.isNaN(len) ? avgLen : len;
  };

  const terms: {
    term: string;
    weight: number;
    stat: TermStat;
    list: readonly DocPosting[];
    at: Int32Array;
  }[] = [];
  for (const [term, weight] of input.weights) {
    const list = input.postings.get(term) ?? [];
    const stat = input.termStats.get(term);
    if (list.length === 0 || stat === undefined) continue;
    // each posting's own, next and previous slot, three to a posting
    const at = new Int32Array(list.length * 3);
    for (let j = 0; j < list.length; j++) {
      const doc = (list[j] as DocPosting).doc;
      at[3 * j] = slot(doc);
      at[3 * j + 1] = slot(doc + 1);
      at[3 * j + 2] = slot(doc - 1);
      lastSession = Math.max(lastSession, sessionOfDoc(doc));
    }
    terms.push({ term, weight, stat, list, at });
  }
  const n = docs.length;
  const inside = new Uint8Array(n);
  const lenX = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const doc = docs[i] as number;
    if (!inSession(doc)) continue;
    inside[i] = 1;
    lenX[i] = Math.max(
      p.lenFloor * avgLenX,
      lenOf(doc) + p.prevWeight * lenOf(doc - 1) + p.nextWeight * lenOf(doc + 1),
    );
  }

  const turnScore = new Float64Array(n);
  const scored = new Uint8Array(n);
  // turns in the order they were first scored (the map below keeps that order)
  const order: number[] = [];
  const sessionScore = new Float64Array(lastSession + 1);
  const sessionScored = new Uint8Array(lastSession + 1);
  let anySession = false;
  const ex = new Float64Array(n);
  // which term last touched a slot (its index + 1), and the slots each term touched, in order
  const exTerm = new Int32Array(n);
  const touched: number[] = [];
  const sessionTf = new Float64Array(lastSession + 1);
  const tfTerm = new Int32Array(lastSession + 1);
  const sessionsTouched: number[] = [];
  for (let ti = 0; ti < terms.length; ti++) {
    const { term, weight, stat, list, at } = terms[ti] as (typeof terms)[number];
    const mark = ti + 1;
    touched.length = 0;
    sessionsTouched.length = 0;
    // expanded term frequency of every turn this term reaches
    const add = (i: number, v: number): void => {
      if (exTerm[i] === mark) ex[i] = (ex[i] as number) + v;
      else {
        exTerm[i] = mark;
        ex[i] = 0 + v;
        touched.push(i);
      }
    };
    for (let j = 0; j < list.length; j++) {
      const x = list[j] as DocPosting;
      add(at[3 * j] as number, x.tf);
      if (p.prevWeight > 0) add(at[3 * j + 1] as number, p.prevWeight * x.tf);
      if (p.nextWeight > 0) add(at[3 * j + 2] as number, p.nextWeight * x.tf);
      const session = sessionOfDoc(x.doc);
      if (tfTerm[session] === mark) sessionTf[session] = (sessionTf[session] as number) + x.tf;
      else {
        tfTerm[session] = mark;
        sessionTf[session] = 0 + x.tf;
        sessionsTouched.push(session);
      }
    }
    let dfx = 0;
    if (input.complete.has(term)) {
      for (const i of touched) if (inside[i] === 1) dfx++;
    } else {
      dfx = Math.min(corpus.turns, stat.df * EXPANSION_ESTIMATE);
    }
    const w = weight * idf(corpus.turns, dfx, p.idfFloor);
    for (const i of touched) {
      if (inside[i] === 0) continue;
      const b = bm25Term(w, ex[i] as number, lenX[i] as number, avgLenX, p);
      if (scored[i] === 1) turnScore[i] = (turnScore[i] as number) + b;
      else {
        scored[i] = 1;
        turnScore[i] = 0 + b;
        order.push(i);
      }
    }
    if (p.sessionWeight > 0) {
      const sw = weight * idf(corpus.sessions, stat.sdf, p.idfFloor);
      for (const session of sessionsTouched) {
        const len = input.sessions.get(session)?.len ?? avgSessionLen;
        const b = bm25Term(sw, sessionTf[session] as number, len, avgSessionLen, p);
        if (sessionScored[session] === 1) {
          sessionScore[session] = (sessionScore[session] as number) + b;
        } else {
          sessionScored[session] = 1;
          sessionScore[session] = 0 + b;
          anySession = true;
        }
      }
    }
  }
  // the session's score, weighted against the best turn's
  let k: number | null = null;
  if (p.sessionWeight > 0 && anySession && order.length > 0) {
    let maxTurn = 0;
    for (const i of order) maxTurn = Math.max(maxTurn, turnScore[i] as number);
    let maxSession = 0;
    for (let s = 0; s <= lastSession; s++) {
      if (sessionScored[s] === 1) maxSession = Math.max(maxSession, sessionScore[s] as number);
    }
    if (maxSession > 0) k = (p.sessionWeight * maxTurn) / maxSession;
  }
  const turnScores = new Map<number, number>();
  for (const i of order) {
    const doc = docs[i] as number;
    const session = sessionOfDoc(doc);
    const own = turnScore[i] as number;
    turnScores.set(
      doc,
      k === null
        ? own
        : own + k * (sessionScored[session] === 1 ? (sessionScore[session] as number) : 0),
    );
  }
  return turnScores;
}

/**
 * The best `n` keys by score; ties broken by `tie` (default: by key), so every engine returns
 * the same order.
 */
export function topKeys<K extends string | number>(
  scores: ReadonlyMap<K, number>,
  n: number,
  tie: (a: K, b: K) => number = (a, b) => (a < b ? -1 : a > b ? 1 : 0),
): K[] {
  if (n <= 0) return [];
  const entries = [...scores.entries()];
  const cmp = (a: [K, number], b: [K, number]): number => b[1] - a[1] || tie(a[0], b[0]);
  if (entries.length <= n) return entries.sort(cmp).map(([k]) => k);
  // keep a sorted top-n buffer: far cheaper than sorting thousands of candidates
  const top: [K, number][] = [];
  for (const e of entries) {
    if (top.length === n && cmp(e, top[n - 1] as [K, number]) >= 0) continue;
    let i = top.length;
    while (i > 0 && cmp(e, top[i - 1] as [K, number]) < 0) i--;
    top.splice(i, 0, e);
    if (top.length > n) top.pop();
  }
  return top.map(([k]) => k);
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

/**
 * The best `n` turns after smoothing, best first, with their smoothed scores: each turn keeps
 * its score plus `p.smoothing` of its better neighbour's, and a turn with no score of its own
 * still inherits from a scored neighbour (not past its session's ends). The same turns, scores
 * and order as `topKeys` over every smoothed score (test/support/smooth-reference.ts holds the
 * plain form), without a map of them all: each turn a scored one reaches is worked out once, by
 * the lowest scored turn next to or at it, and kept only while it is among the best `n`.
 */
export function smoothedTop(
  scores: ReadonlyMap<number, number>,
  sessions: ReadonlyMap<number, SessionStat>,
  n: number,
  tie: (a: number, b: number) => number,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<number, number> {
  if (n <= 0) return new Map();
  if (p.smoothing <= 0) {
    return new Map(topKeys(scores, n, tie).map((d) => [d, scores.get(d) ?? 0]));
  }
  const at = (doc: number): number => scores.get(doc) ?? 0;
  const top: number[] = [];
  const topScore: number[] = [];
  // before(s, d, i): the turn d scored s goes before the i-th kept one (topKeys' order)
  const before = (s: number, d: number, i: number): boolean => {
    const t = topScore[i] as number;
    return t - s < 0 || (t - s === 0 && tie(d, top[i] as number) < 0);
  };
  let lastSession = -1;
  let lastTurns = 0;
  const consider = (doc: number): void => {
    const session = sessionOfDoc(doc);
    if (session !== lastSession) {
      lastSession = session;
      lastTurns = sessions.get(session)?.turns ?? SEQ_SPAN - 1;
    }
    const seq = seqOfDoc(doc);
    if (seq < 1 || seq > lastTurns) return;
    const s = at(doc) + p.smoothing * Math.max(at(doc - 1), at(doc + 1));
    if (!(s > 0)) return;
    if (top.length === n && !before(s, doc, n - 1)) return;
    let i = top.length;
    while (i > 0 && before(s, doc, i - 1)) i--;
    top.splice(i, 0, doc);
    topScore.splice(i, 0, s);
    if (top.length > n) {
      top.pop();
      topScore.pop();
    }
  };
  for (const doc of scores.keys()) {
    const prev = scores.has(doc - 1);
    // doc - 1 and doc belong to the lowest scored turn at or next to them; doc + 1 to doc
    if (!prev && !scores.has(doc - 2)) consider(doc - 1);
    if (!prev) consider(doc);
    consider(doc + 1);
  }
  return new Map(top.map((d, i) => [d, topScore[i] as number]));
}
