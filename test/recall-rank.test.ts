import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  evidenceCount,
  formatEvidenceCount,
  loadLocomo,
  loadLocomoFiles,
  parseEvidence,
  parseSessionDate,
} from '../eval/locomo-data.js';
import { metricRows, rankPairs } from '../eval/locomo-metrics.js';
import { analyze, ANALYZER_VERSION } from '../src/domain/text/analyze.js';
import { contentTokens, wordForm } from '../src/domain/text/words.js';
import {
  bm25Term,
  DEFAULT_RANK_PARAMS,
  docOf,
  idf,
  scoreRound,
  smoothedTop,
  topKeys,
  type DocPosting,
} from '../src/recall/lexical-rank.js';
import { dateMatches, queryCues } from '../src/recall/query-cues.js';
import { code } from './support/errors.js';
import { scoreRoundReference } from './support/score-round-reference.js';
import { smoothReference } from './support/smooth-reference.js';
import { parsePostings } from '../src/store/recall-sql.js';
import { rankLiveFacts } from '../src/recall/relevant-search.js';
import type { Fact } from '../src/domain/fact.js';
import type { TrustView } from '../src/domain/trust.js';

describe('recall analysis', () => {
  it('lowercases, drops stopwords and possessives, and stems', () => {
    expect(analyze("Caroline's dogs don't RUN.")).toEqual(['carolin', 'dog', 'run']);
    expect(analyze('I’m here, and you are there')).toEqual([]);
    expect(analyze('the of and')).toEqual([]);
    // different words stay different
    expect(analyze('painting')).not.toEqual(analyze('pointing'));
  });
});

describe('one English text layer', () => {
  it('indexes words of any script, as the gate reads them', () => {
    expect(analyze('Как дела у мамы?')).toEqual(['как', 'дела', 'мамы'].map(wordForm));
    expect(analyze('Café in Umeå, café again')).toEqual(['café', 'umeå', 'café'].map(wordForm));
  });

  it("reads words that name Object.prototype's members as words", () => {
    const text = 'The constructor called toString, then __proto__ and hasOwnProperty valueOf';
    // underscores are not letters: "__proto__" is the word "proto"
    const words = ['constructor', 'called', 'tostring', 'proto', 'hasownproperty', 'valueof'];
    expect(analyze(text)).toEqual(words.map(wordForm));
    for (const w of analyze(text)) expect(typeof w).toBe('string');
    expect(contentTokens(text)).toEqual([...new Set(analyze(text))]);
  });

  it('makes a run of more than 64 letters one bounded term, and stems every word up to 64', () => {
    const letters = (n: number, seed: number): string =>
      Array.from({ length: n }, (_, i) =>
        String.fromCharCode(97 + ((i * 7 + seed * 13) % 26)),
      ).join('');
    const long = letters(20_000, 1);
    const [term] = analyze(`see ${long} now`).filter((t) => t.includes('~'));
    expect(term).toMatch(/^[a-z]{48}~[0-9a-f]{8}$/);
    expect(analyze(long)).toEqual([term]);
    // two runs that differ only at the end are two terms
    const other = `${long.slice(0, -1)}${long.endsWith('a') ? 'b' : 'a'}`;
    expect(analyze(other)[0]).not.toBe(term);
    // the negative control: a 64-letter word ending in "ing" is still stemmed, no "~"
    const word64 = `${letters(61, 2)}ing`;
    expect(word64).toHaveLength(64);
    expect(wordForm(word64)).not.toContain('~');
    expect(wordForm(word64).length).toBeLessThan(64);
    // a letter outside the BMP at the cut is kept whole, never half a surrogate pair
    const astral = '𐌰'.repeat(70);
    expect(analyze(astral)[0]).toBe(`${'𐌰'.repeat(48)}~${analyze(astral)[0]?.slice(-8)}`);
    expect(ANALYZER_VERSION).toBe('3');
  });

  it('gives recall the content words the gate and attestation compare', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
        expect([...new Set(analyze(text))]).toEqual(contentTokens(text));
      }),
    );
    for (const text of ["The user's kids went to Lund.", 'Sept 2: two flights, flying home']) {
      expect([...new Set(analyze(text))]).toEqual(contentTokens(text));
    }
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
      'D8:6',
      'D9:17',
      'D11:26',
      'D30:5',
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

  it('maps evidence by the dia_id a turn carries, and lists references no turn carries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ml-locomo-'));
    try {
      const file = join(dir, 'skips.json');
      // session 2's ids skip numbers: D2:4 is its second turn, and D2:2 names no turn
      writeFileSync(
        file,
        JSON.stringify([
          {
            sample_id: 'skips',
            conversation: {
              speaker_a: 'Ana',
              speaker_b: 'Bo',
              session_1_date_time: '1:00 pm on 1 May, 2023',
              session_1: [
                { speaker: 'Ana', dia_id: 'D1:1', text: 'hello' },
                { speaker: 'Bo', dia_id: 'D1:2', text: 'hi' },
              ],
              session_2_date_time: '2:00 pm on 3 May, 2023',
              session_2: [
                { speaker: 'Ana', dia_id: 'D2:1', text: 'the kiln cracked' },
                { speaker: 'Bo', dia_id: 'D2:4', text: 'oh no' },
                { speaker: 'Ana', dia_id: 'D2:07', text: 'new one on order' },
              ],
            },
            qa: [
              { question: 'What broke?', evidence: ['D2:4', 'D2:2'], category: 1 },
              { question: 'What was ordered?', evidence: ['D2:7; D9:1'], category: 2 },
            ],
          },
        ]),
      );
      const [conv] = loadLocomo(file);
      expect(conv?.questions.map((q) => q.evidence)).toEqual([
        [{ session: 2, seq: 2 }],
        [{ session: 2, seq: 3 }],
      ]);
      expect(conv?.unmapped).toEqual([
        { question: 1, ref: 'D2:2' },
        { question: 2, ref: 'D9:1' },
      ]);
      const count = evidenceCount(conv === undefined ? [] : [conv]);
      expect(count.references).toBe(4);
      expect(formatEvidenceCount(count)).toBe(
        'evidence: 4 references, 2 name no turn (left out of the scores): skips question 1 D2:2; skips question 2 D9:1',
      );
      // the negative control: a file whose ids all name turns reports none unmapped
      expect(formatEvidenceCount({ references: 3, unmapped: [] })).toBe(
        'evidence: 3 references, every one names a turn by its dia_id',
      );
      // two turns with one id, and one conversation read twice, are refused
      const dup = join(dir, 'dup.json');
      writeFileSync(
        dup,
        JSON.stringify([
          {
            sample_id: 'dup',
            conversation: {
              speaker_a: 'Ana',
              speaker_b: 'Bo',
              session_1_date_time: '1:00 pm on 1 May, 2023',
              session_1: [
                { speaker: 'Ana', dia_id: 'D1:1', text: 'a' },
                { speaker: 'Bo', dia_id: 'D1:01', text: 'b' },
              ],
            },
            qa: [],
          },
        ]),
      );
      expect(await code(Promise.resolve().then(() => loadLocomo(dup)))).toBe('INVALID_ARGUMENT');
      expect(await code(Promise.resolve().then(() => loadLocomoFiles([file, file])))).toBe(
        'INVALID_ARGUMENT',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    // none asked: none (it once read past the empty buffer)
    expect(topKeys(scores, 0)).toEqual([]);
  });
});

describe('scoreRound over typed arrays', () => {
  /** A round's input: up to 4 terms over 4 sessions, some postings out of their session. */
  const roundInput = fc
    .record({
      terms: fc.array(
        fc.record({
          weight: fc.constantFrom(1, 2, 0.35),
          df: fc.integer({ min: 1, max: 400 }),
          sdf: fc.integer({ min: 1, max: 40 }),
          complete: fc.boolean(),
          postings: fc.uniqueArray(
            fc.record({
              session: fc.integer({ min: 0, max: 3 }),
              seq: fc.integer({ min: 1, max: 14 }),
              tf: fc.integer({ min: 1, max: 4 }),
              len: fc.integer({ min: 1, max: 40 }),
            }),
            { selector: (x) => `${x.session}:${x.seq}`, maxLength: 30 },
          ),
        }),
        { maxLength: 4 },
      ),
      // a session's statistics may be missing (its turns then bound nothing)
      sessions: fc.array(
        fc.option(
          fc.record({
            turns: fc.integer({ min: 1, max: 14 }),
            len: fc.integer({ min: 1, max: 300 }),
          }),
        ),
        { minLength: 4, maxLength: 4 },
      ),
      corpus: fc.record({
        turns: fc.integer({ min: 0, max: 2000 }),
        sessions: fc.integer({ min: 0, max: 50 }),
        totalLen: fc.integer({ min: 1, max: 40_000 }),
      }),
      params: fc.record({
        prevWeight: fc.constantFrom(0, 1, 0.5),
        nextWeight: fc.constantFrom(0, 0.3),
        sessionWeight: fc.constantFrom(0, 0.3),
      }),
    })
    .map(({ terms, sessions, corpus, params }) => {
      const names = ['budget', 'review', 'print', 'acme'];
      return {
        input: {
          weights: new Map(terms.map((t, i) => [names[i] as string, t.weight])),
          corpus,
          termStats: new Map(terms.map((t, i) => [names[i] as string, { df: t.df, sdf: t.sdf }])),
          postings: new Map(
            terms.map((t, i) => [
              names[i] as string,
              t.postings.map((x): DocPosting => ({
                doc: docOf(x.session, x.seq),
                tf: x.tf,
                len: x.len,
              })),
            ]),
          ),
          complete: new Set(terms.flatMap((t, i) => (t.complete ? [names[i] as string] : []))),
          sessions: new Map(sessions.flatMap((s, i) => (s === null ? [] : [[i, s] as const]))),
        },
        params: { ...DEFAULT_RANK_PARAMS, ...params },
      };
    });

  it('gives every turn the score the plain form gives it, to the bit, in the same order', () => {
    fc.assert(
      fc.property(roundInput, ({ input, params }) => {
        const fast = [...scoreRound(input, params)];
        const plain = [...scoreRoundReference(input, params)];
        expect(fast.length).toBe(plain.length);
        fast.forEach(([doc, score], i) => {
          const [d, s] = plain[i] as [number, number];
          expect(doc).toBe(d);
          // Object.is: the same double, not merely a close one
          expect(Object.is(score, s)).toBe(true);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('scores a two-word reply no denser than an average turn holding the same word (length floor)', () => {
    // turn 0#2 is "Dani: truck!!" (2 terms); turn 1#2 is an ordinary turn of 5 terms, both with
    // "truck" once; neither has neighbours holding it
    const input = {
      weights: new Map([['truck', 1]]),
      corpus: { turns: 100, sessions: 2, totalLen: 500 },
      termStats: new Map([['truck', { df: 2, sdf: 2 }]]),
      postings: new Map([
        [
          'truck',
          [
            { doc: docOf(0, 2), tf: 1, len: 2 },
            { doc: docOf(1, 2), tf: 1, len: 5 },
          ],
        ],
      ]),
      complete: new Set(['truck']),
      sessions: new Map([
        [0, { turns: 50, len: 250 }],
        [1, { turns: 50, len: 250 }],
      ]),
    };
    const solo = { ...DEFAULT_RANK_PARAMS, prevWeight: 0, nextWeight: 0, sessionWeight: 0 };
    const floored = scoreRound(input, solo);
    expect(floored.get(docOf(0, 2))).toBe(floored.get(docOf(1, 2)));
    expect(DEFAULT_RANK_PARAMS.lenFloor).toBeGreaterThanOrEqual(1);
    // the negative control: without the floor the short reply outscores the ordinary turn
    const unfloored = scoreRound(input, { ...solo, lenFloor: 0 });
    expect(unfloored.get(docOf(0, 2)) ?? 0).toBeGreaterThan(unfloored.get(docOf(1, 2)) ?? 0);
    // a turn longer than the floor is still normalised by its length
    const long = {
      ...input,
      postings: new Map([
        [
          'truck',
          [
            { doc: docOf(0, 2), tf: 1, len: 40 },
            { doc: docOf(1, 2), tf: 1, len: 5 },
          ],
        ],
      ]),
    };
    const longScores = scoreRound(long, solo);
    expect(longScores.get(docOf(0, 2)) ?? 0).toBeLessThan(longScores.get(docOf(1, 2)) ?? 0);
  });

  it('negative control: a changed weight or a dropped posting changes some score', () => {
    const s = (session: number, seq: number, tf = 1, len = 5): DocPosting => ({
      doc: docOf(session, seq),
      tf,
      len,
    });
    const input = {
      weights: new Map([
        ['budget', 1],
        ['review', 1],
      ]),
      corpus: { turns: 100, sessions: 3, totalLen: 500 },
      termStats: new Map([
        ['budget', { df: 3, sdf: 2 }],
        ['review', { df: 2, sdf: 2 }],
      ]),
      postings: new Map([
        ['budget', [s(0, 2), s(0, 3, 2), s(1, 4)]],
        ['review', [s(0, 3), s(2, 1)]],
      ]),
      complete: new Set(['budget']),
      sessions: new Map([[0, { turns: 5, len: 30 }]]),
    };
    const base = [...scoreRound(input)];
    expect(base).toEqual([...scoreRoundReference(input)]);
    const reweighed = { ...input, weights: new Map([...input.weights, ['review', 2]]) };
    expect([...scoreRound(reweighed)]).not.toEqual(base);
    const dropped = {
      ...input,
      postings: new Map([...input.postings, ['review', [s(2, 1)]]]),
    };
    expect([...scoreRound(dropped)]).not.toEqual(base);
  });
});

describe('postings text as the store returns it', () => {
  /** The plain parse: split on RS, then on US, every number through Number. */
  const plain = (p: string | null, s: string | null) => {
    const rows = (t: string | null) =>
      t === null || t === '' ? [] : t.split('\x1e').map((r) => r.split('\x1f'));
    const postings = new Map<string, { session: string; seq: number; tf: number; len: number }[]>();
    for (const [term = '', session = '', seq, tf, len] of rows(p)) {
      let list = postings.get(term);
      if (list === undefined) postings.set(term, (list = []));
      list.push({ session, seq: Number(seq), tf: Number(tf), len: Number(len) });
    }
    const held = new Set([...postings.values()].flatMap((l) => l.map((x) => x.session)));
    const stats = new Map<string, { turns: number; len: number }>();
    for (const [id = '', turns, len] of rows(s)) {
      if (held.has(id)) stats.set(id, { turns: Number(turns), len: Number(len) });
    }
    return { postings, stats };
  };
  const word = fc.stringMatching(/^[a-z0-9'-]{1,8}$/);
  const record = fc.record({
    term: fc.constantFrom('budget', 'review', "i'm", 'b'),
    session: fc.oneof(fc.constantFrom('s-1', 's-2', 'owner-s00011'), word),
    seq: fc.nat({ max: 5_000_000 }),
    tf: fc.integer({ min: 1, max: 40 }),
    len: fc.nat({ max: 100_000 }),
  });

  it('reads what the plain split reads: runs of a term and a session, numbers digit by digit', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 60 }), fc.boolean(), (list, withStats) => {
        const p =
          list.length === 0
            ? null
            : list.map((r) => [r.term, r.session, r.seq, r.tf, r.len].join('\x1f')).join('\x1e');
        const sessions = [...new Set(list.map((r) => r.session)), 'never-posted'];
        const s = withStats
          ? sessions.map((id, i) => `${id}\x1f${i + 1}\x1f${i * 7}`).join('\x1e')
          : null;
        expect(parsePostings(p, s)).toEqual(plain(p, s));
      }),
      { numRuns: 300 },
    );
    // a session named in the statistics with no posting is not kept (negative control)
    const got = parsePostings('budget\x1fs-1\x1f3\x1f1\x1f9', 's-1\x1f4\x1f20\x1es-2\x1f5\x1f30');
    expect([...got.stats.keys()]).toEqual(['s-1']);
    expect(got.postings.get('budget')).toEqual([{ session: 's-1', seq: 3, tf: 1, len: 9 }]);
  });
});

describe('smoothedTop', () => {
  /** Scores on up to 3 sessions (runs of neighbours, gaps, seq 1 and past the last turn). */
  const input = fc.record({
    scored: fc.uniqueArray(
      fc.record({
        session: fc.integer({ min: 0, max: 2 }),
        seq: fc.integer({ min: 1, max: 12 }),
        // few distinct values: ties in score are common, so the order of ties is tested
        score: fc.constantFrom(0.5, 1, 1.5, 2, 3, 0.25),
      }),
      { selector: (x) => `${x.session}:${x.seq}`, maxLength: 30 },
    ),
    turns: fc.array(fc.option(fc.integer({ min: 1, max: 12 })), { minLength: 3, maxLength: 3 }),
    n: fc.integer({ min: 0, max: 40 }),
    smoothing: fc.constantFrom(0.5, 0, 1),
  });
  // sessions compared by number, then seq (as SessionNumbers.compare does by name)
  const tie = (a: number, b: number) => a - b;

  it('keeps the turns, scores and order topKeys gives over every smoothed score (property)', () => {
    fc.assert(
      fc.property(input, ({ scored, turns, n, smoothing }) => {
        const scores = new Map(scored.map((x) => [docOf(x.session, x.seq), x.score]));
        const sessions = new Map(
          turns.flatMap((t, i) => (t === null ? [] : [[i, { turns: t, len: 10 }] as const])),
        );
        const p = { ...DEFAULT_RANK_PARAMS, smoothing };
        const all = smoothReference(scores, sessions, p);
        const want = topKeys(all, n, tie).map((d) => [d, all.get(d)]);
        const got = [...smoothedTop(scores, sessions, n, tie, p)];
        expect(got.length).toBe(want.length);
        got.forEach(([d, v], i) => {
          expect(d).toBe(want[i]?.[0]);
          expect(Object.is(v, want[i]?.[1])).toBe(true);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('works a turn out once, whichever scored turn reaches it first (and a control)', () => {
    // 1:2 and 1:4 both reach 1:3; 1:3 itself is not scored
    const scores = new Map([
      [docOf(1, 4), 1],
      [docOf(1, 2), 2],
    ]);
    const half = { ...DEFAULT_RANK_PARAMS, smoothing: 0.5 };
    const got = smoothedTop(scores, new Map(), 10, (a, b) => a - b, half);
    // 1:2 scores 2; 1:1, 1:3 (half of 1:2's) and 1:4 score 1, in doc order; 1:5 half of 1:4's
    expect([...got.keys()]).toEqual([
      docOf(1, 2),
      docOf(1, 1),
      docOf(1, 3),
      docOf(1, 4),
      docOf(1, 5),
    ]);
    expect(got.get(docOf(1, 3))).toBe(1);
    expect(got.get(docOf(1, 2))).toBe(2);
    // past the session's last turn nothing is reached
    const bounded = smoothedTop(
      scores,
      new Map([[1, { turns: 4, len: 9 }]]),
      10,
      (a, b) => a - b,
      half,
    );
    expect([...bounded.keys()]).not.toContain(docOf(1, 5));
  });
});

describe('rankLiveFacts over a kept view', () => {
  const WORDS = ['maya', 'porto', 'sister', 'invoice', 'budget', 'review', 'denver', 'visit'];
  const factOf = (i: number, words: readonly string[], primary: boolean): Fact =>
    ({
      id: `f${String(i).padStart(3, '0')}`,
      text: words.join(' '),
      origin: primary ? 'saw' : 'inferred',
    }) as Fact;
  const viewOf = (facts: readonly Fact[]): TrustView => ({ live: [...facts] }) as TrustView;
  const lookup = {
    corpus: { turns: 50, sessions: 5, totalLen: 400 },
    terms: new Map(WORDS.map((w, i) => [analyze(w)[0] ?? w, { df: 1 + i * 3, sdf: 1 }])),
  };
  const queryOf = (words: readonly string[]): Map<string, number> => {
    const q = new Map<string, number>();
    for (const t of analyze(words.join(' '))) q.set(t, (q.get(t) ?? 0) + 1);
    return q;
  };

  it('ranks each query as a fresh view of the same facts does: one ranking leaves nothing for the next', () => {
    const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(words, fc.boolean()), { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(words, fc.integer({ min: 1, max: 6 })), { minLength: 2, maxLength: 6 }),
        (rows, queries) => {
          const facts = rows.map(([w, primary], i) => factOf(i, w, primary));
          const kept = viewOf(facts);
          for (const [q, k] of queries) {
            const got = rankLiveFacts(kept, queryOf(q), lookup, k);
            const fresh = rankLiveFacts(viewOf(facts), queryOf(q), lookup, k);
            expect(got.map((r) => [r.fact.id, r.score])).toEqual(
              fresh.map((r) => [r.fact.id, r.score]),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a query that touches no fact, after one that touched many, finds none (and a control)', () => {
    const facts = [
      factOf(0, ['maya', 'porto'], true),
      factOf(1, ['maya', 'sister'], true),
      factOf(2, ['budget'], false),
    ];
    const kept = viewOf(facts);
    expect(rankLiveFacts(kept, queryOf(['maya', 'budget']), lookup, 5)).toHaveLength(3);
    expect(rankLiveFacts(kept, queryOf(['denver']), lookup, 5)).toEqual([]);
    // the control: the same view still finds what it holds
    expect(rankLiveFacts(kept, queryOf(['budget']), lookup, 5).map((r) => r.fact.id)).toEqual([
      'f002',
    ]);
  });
});
