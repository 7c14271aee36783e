import { describe, expect, it } from 'vitest';
import { parseEvidence, parseSessionDate } from '../eval/locomo-data.js';
import { metricRows, rankPairs } from '../eval/locomo-metrics.js';
import { analyze } from '../src/domain/analyze.js';
import {
  bm25Term,
  DEFAULT_RANK_PARAMS,
  docOf,
  idf,
  scoreRound,
  topKeys,
  type DocPosting,
} from '../src/recall/lexical-rank.js';
import { dateMatches, queryCues } from '../src/recall/query-cues.js';
import { code } from './support/errors.js';

describe('recall analysis', () => {
  it('lowercases, drops stopwords and possessives, and stems', () => {
    expect(analyze("Caroline's dogs don't RUN.")).toEqual(['carolin', 'dog', 'run']);
    expect(analyze('I’m here, and you are there')).toEqual(["i'm"]);
    expect(analyze('the of and')).toEqual([]);
    // different words stay different
    expect(analyze('painting')).not.toEqual(analyze('pointing'));
  });
});

describe('query cues', () => {
  it('sees time questions, months and years, and not "may" the verb', () => {
    expect(queryCues('When did Jo start pottery?').temporal).toBe(true);
    expect(queryCues('What did Jo make?').temporal).toBe(false);
    const c = queryCues('What happened on 8 May, 2023?');
    expect([...c.months]).toEqual([5]);
    expect([...c.years]).toEqual([2023]);
    expect(queryCues('She may go to the concert').months.size).toBe(0);
    expect(dateMatches(c, new Date('2023-05-08T13:56:00Z'))).toBe(true);
    expect(dateMatches(c, new Date('2023-06-08T13:56:00Z'))).toBe(false);
    expect(dateMatches(queryCues('What did Jo make?'), new Date('2023-05-08T00:00:00Z'))).toBe(
      false,
    );
  });
});

describe('LoCoMo data', () => {
  it('reads malformed evidence ids and session dates', async () => {
    expect(parseEvidence(['D8:6; D9:17', 'D:11:26', 'D30:05'])).toEqual([
      { session: 8, seq: 6 },
      { session: 9, seq: 17 },
      { session: 11, seq: 26 },
      { session: 30, seq: 5 },
    ]);
    expect(parseSessionDate('12:09 am on 13 September, 2023').toISOString()).toBe(
      '2023-09-13T00:09:00.000Z',
    );
    expect(parseSessionDate('1:56 pm on 8 May, 2023').toISOString()).toBe(
      '2023-05-08T13:56:00.000Z',
    );
    expect(await code(Promise.resolve().then(() => parseSessionDate('yesterday')))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('ranks pairs by their better turn and scores any@k, frac@k and pair@10', () => {
    expect(rankPairs(['1:4', '1:3', '2:1', '1:1'], 10)).toEqual(['1:2', '2:1', '1:1']);
    const rows = metricRows([
      { category: 1, evidence: ['1:3', '1:9'], ranked: ['1:4', '1:3', '2:2'] },
      { category: 2, evidence: ['2:8'], ranked: ['2:7', '1:1'] },
      { category: 5, evidence: [], ranked: ['1:1'] },
    ]);
    const cat1 = rows.find((r) => r.label === 'category 1');
    expect(cat1).toMatchObject({ questions: 1, pairAny10: 1 });
    expect(cat1?.turnAny[5]).toBe(1);
    expect(cat1?.turnFrac[5]).toBe(0.5);
    const cat2 = rows.find((r) => r.label === 'category 2');
    // 2:7 and 2:8 are one pair: a pair hit, not a turn hit
    expect(cat2?.turnAny[20]).toBe(0);
    expect(cat2?.pairAny10).toBe(1);
    // questions without evidence are not scored
    expect(rows.find((r) => r.label === 'all categories')?.questions).toBe(2);
  });
});

describe('lexical ranking', () => {
  it('weighs a rare term over a common one, and floors the IDF of the commonest', () => {
    expect(idf(1000, 1, 1.25)).toBeGreaterThan(idf(1000, 100, 1.25));
    expect(idf(1000, 900, 1.25)).toBe(1.25);
    const s = (session: number, seq: number, tf = 1, len = 5): DocPosting => ({
      doc: docOf(session, seq),
      tf,
      len,
    });
    const postings = new Map<string, DocPosting[]>([
      ['violin', [s(0, 3)]],
      ['lesson', [s(0, 9), s(1, 2), s(1, 5), s(2, 4), s(2, 8)]],
    ]);
    const scores = scoreRound({
      weights: new Map([
        ['violin', 1],
        ['lesson', 1],
      ]),
      corpus: { turns: 100, sessions: 3, totalLen: 500 },
      termStats: new Map([
        ['violin', { df: 1, sdf: 1 }],
        ['lesson', { df: 5, sdf: 3 }],
      ]),
      postings,
      complete: new Set(['violin', 'lesson']),
      sessions: new Map([
        [0, { turns: 30, len: 150 }],
        [1, { turns: 30, len: 150 }],
        [2, { turns: 40, len: 200 }],
      ]),
    });
    const best = topKeys(scores, 1)[0];
    expect(best).toBe(docOf(0, 3));
    // the next turn inherits the previous turn's words, and nothing reaches past a session's end
    expect(scores.get(docOf(0, 4))).toBeGreaterThan(0);
    expect(scores.has(docOf(2, 41))).toBe(false);
    expect(DEFAULT_RANK_PARAMS.feedbackDocs).toBe(0);
  });

  it('scores a BM25 term: saturating in tf, lower in a longer document, w at average length', () => {
    const p = { k1: 1.2, b: 0.6 };
    // at the average length with tf = 1, a term is worth exactly its weight
    expect(bm25Term(2, 1, 10, 10, p)).toBeCloseTo(2, 12);
    expect(bm25Term(1, 2, 10, 10, p)).toBeGreaterThan(bm25Term(1, 1, 10, 10, p));
    expect(bm25Term(1, 2, 10, 10, p)).toBeLessThan(2 * bm25Term(1, 1, 10, 10, p));
    expect(bm25Term(1, 1, 20, 10, p)).toBeLessThan(bm25Term(1, 1, 10, 10, p));
    // b = 0: length does not matter (negative control for the length normalisation)
    expect(bm25Term(1, 1, 20, 10, { k1: 1.2, b: 0 })).toBe(
      bm25Term(1, 1, 10, 10, { k1: 1.2, b: 0 }),
    );
  });

  it('keeps the best n in order with ties broken by key, as a full sort would', () => {
    const scores = new Map<number, number>();
    for (let i = 0; i < 500; i++) scores.set((i * 7919) % 1009, Math.floor((i * 31) % 17));
    const full = [...scores.entries()].sort(([ka, a], [kb, b]) => b - a || ka - kb).map(([k]) => k);
    expect(topKeys(scores, 25)).toEqual(full.slice(0, 25));
    expect(topKeys(scores, 1000)).toEqual(full);
  });
});
