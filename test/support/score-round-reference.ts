import {
  bm25Term,
  DEFAULT_RANK_PARAMS,
  EXPANSION_ESTIMATE,
  idf,
  seqOfDoc,
  sessionOfDoc,
  type RankParams,
  type RoundInput,
} from '../../src/recall/lexical-rank.js';

/**
 * scoreRound as it was written first, term by term over maps: the plain form the typed-array
 * one in src/recall/lexical-rank.ts must match to the bit.
 */
export function scoreRoundReference(
  input: RoundInput,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<number, number> {
  const { corpus } = input;
  const avgLen = corpus.turns === 0 ? 1 : corpus.totalLen / corpus.turns;
  const avgLenX = avgLen * (1 + p.prevWeight + p.nextWeight);
  const avgSessionLen = corpus.sessions === 0 ? 1 : corpus.totalLen / corpus.sessions;
  const lens = new Map<number, number>();
  for (const list of input.postings.values()) for (const x of list) lens.set(x.doc, x.len);
  const inSession = (doc: number): boolean => {
    const seq = seqOfDoc(doc);
    const s = input.sessions.get(sessionOfDoc(doc));
    return seq >= 1 && (s === undefined || seq <= s.turns);
  };
  const lenOf = (doc: number): number => (inSession(doc) ? (lens.get(doc) ?? avgLen) : 0);

  const turnScores = new Map<number, number>();
  const sessionScores = new Map<number, number>();
  const ex = new Map<number, number>();
  const sessionTf = new Map<number, number>();
  for (const [term, weight] of input.weights) {
    const list = input.postings.get(term) ?? [];
    const stat = input.termStats.get(term);
    if (list.length === 0 || stat === undefined) continue;
    // expanded term frequency of every turn this term reaches
    ex.clear();
    sessionTf.clear();
    for (const x of list) {
      ex.set(x.doc, (ex.get(x.doc) ?? 0) + x.tf);
      if (p.prevWeight > 0) ex.set(x.doc + 1, (ex.get(x.doc + 1) ?? 0) + p.prevWeight * x.tf);
      if (p.nextWeight > 0) ex.set(x.doc - 1, (ex.get(x.doc - 1) ?? 0) + p.nextWeight * x.tf);
      const session = sessionOfDoc(x.doc);
      sessionTf.set(session, (sessionTf.get(session) ?? 0) + x.tf);
    }
    for (const doc of [...ex.keys()]) if (!inSession(doc)) ex.delete(doc);
    const dfx = input.complete.has(term)
      ? ex.size
      : Math.min(corpus.turns, stat.df * EXPANSION_ESTIMATE);
    const w = weight * idf(corpus.turns, dfx, p.idfFloor);
    for (const [doc, tf] of ex) {
      const lenX = Math.max(
        p.lenFloor * avgLenX,
        lenOf(doc) + p.prevWeight * lenOf(doc - 1) + p.nextWeight * lenOf(doc + 1),
      );
      turnScores.set(doc, (turnScores.get(doc) ?? 0) + bm25Term(w, tf, lenX, avgLenX, p));
    }
    if (p.sessionWeight > 0) {
      const sw = weight * idf(corpus.sessions, stat.sdf, p.idfFloor);
      for (const [session, tf] of sessionTf) {
        const len = input.sessions.get(session)?.len ?? avgSessionLen;
        sessionScores.set(
          session,
          (sessionScores.get(session) ?? 0) + bm25Term(sw, tf, len, avgSessionLen, p),
        );
      }
    }
  }
  if (p.sessionWeight > 0 && sessionScores.size > 0 && turnScores.size > 0) {
    let maxTurn = 0;
    for (const v of turnScores.values()) maxTurn = Math.max(maxTurn, v);
    let maxSession = 0;
    for (const v of sessionScores.values()) maxSession = Math.max(maxSession, v);
    if (maxSession > 0) {
      const k = (p.sessionWeight * maxTurn) / maxSession;
      for (const [doc, score] of turnScores) {
        turnScores.set(doc, score + k * (sessionScores.get(sessionOfDoc(doc)) ?? 0));
      }
    }
  }
  return turnScores;
}
