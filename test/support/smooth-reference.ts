import type { SessionStat } from '../../src/domain/recall-index.js';
import {
  DEFAULT_RANK_PARAMS,
  SEQ_SPAN,
  seqOfDoc,
  sessionOfDoc,
  type RankParams,
} from '../../src/recall/lexical-rank.js';

/**
 * Smoothing as it was written first, over maps: every turn a scored one reaches, with its score
 * plus a share of its better neighbour's (the boost pool was then `topKeys` of all of them). The
 * plain form `smoothedTop` in src/recall/lexical-rank.ts must match to the bit and in order.
 */
export function smoothReference(
  scores: ReadonlyMap<number, number>,
  sessions: ReadonlyMap<number, SessionStat>,
  p: RankParams = DEFAULT_RANK_PARAMS,
): Map<number, number> {
  if (p.smoothing <= 0) return new Map(scores);
  const out = new Map<number, number>();
  const at = (doc: number): number => scores.get(doc) ?? 0;
  const visit = (doc: number): void => {
    const seq = seqOfDoc(doc);
    const turns = sessions.get(sessionOfDoc(doc))?.turns ?? SEQ_SPAN - 1;
    if (seq < 1 || seq > turns || out.has(doc)) return;
    const s = at(doc) + p.smoothing * Math.max(at(doc - 1), at(doc + 1));
    if (s > 0) out.set(doc, s);
  };
  for (const doc of scores.keys()) {
    visit(doc - 1);
    visit(doc);
    visit(doc + 1);
  }
  return out;
}
