// Arrival's bounded search lets the database choose the candidate sessions and read their
// postings in one statement (RecallSql.candidatePostings); recall.search sums the per-session
// totals in code (posting-reader.ts). Both must choose the same sessions and rank the same turns,
// with and without the arrival's session left out, on both engines; the control shows the
// one-statement path really ran (and that the plain port never takes it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LexicalIndexPort } from '../src/domain/recall-index.js';
import { storeClient } from '../src/engine/test-access.js';
import { lexicalSearch } from '../src/recall/lexical-search.js';
import { RELEVANT_RANK_PARAMS, withoutSession } from '../src/recall/relevant-search.js';
import { RecallSql } from '../src/store/recall-sql.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';

/** Twelve sessions that share their words in different amounts (ties included). */
const TOPICS = [
  'budget review with the print shop moved to Friday',
  'the budget review slipped again, call the print shop',
  'invoice for the print shop sent, budget unchanged',
  'review the invoice from the courier before Friday',
];

/** A small budget, so even the rarest word is read through the per-session totals. */
const PARAMS = { ...RELEVANT_RANK_PARAMS, postingBudget: 4, candidateSessions: 3 };

const QUERIES = [
  'When did we move the budget review with the print shop?',
  'budget review',
  'invoice courier Friday',
  'print shop',
  'nothing matches this',
];

describe.each(ENGINES)('candidate sessions chosen by the database [%s]', (kind) => {
  let t: TestEngine;
  const sessions: string[] = [];
  beforeAll(async () => {
    t = await openTestEngine(kind);
    await t.engine.subjects.create('u');
    const me = t.engine.subject('u');
    for (let s = 0; s < 12; s++) {
      const { id } = await me.sessions.create();
      sessions.push(id);
      for (let i = 0; i <= s % 4; i++) {
        await me.turns.add({
          sessionId: id,
          role: 'user',
          content: TOPICS[(s + i) % TOPICS.length] ?? '',
        });
      }
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('chooses the same sessions and ranks the same turns as the totals summed in code', async () => {
    const sql = new RecallSql(storeClient(t.engine), 'u');
    let oneStatement = 0;
    const counted = (port: LexicalIndexPort): LexicalIndexPort => {
      const inner = port.candidatePostings;
      if (inner === undefined) return port;
      return {
        ...port,
        candidatePostings: (...args) => {
          oneStatement++;
          return inner(...args);
        },
      };
    };
    for (const query of QUERIES) {
      for (const except of [null, sessions[0] ?? '', sessions[5] ?? '']) {
        const run = async (candidates: boolean) => {
          const base = counted(sql.port({ candidates }));
          const port = except === null ? base : withoutSession(base, except);
          return (await lexicalSearch(port, query, { limit: 8, params: PARAMS })).map((r) => [
            r.session,
            r.seq,
            r.score,
          ]);
        };
        const before = oneStatement;
        const inCode = await run(false);
        // negative control: the plain port never takes the one-statement path
        expect(oneStatement).toBe(before);
        const inDatabase = await run(true);
        expect(inDatabase, `${query} (except ${except})`).toEqual(inCode);
        if (except !== null) {
          expect(inDatabase.map(([s]) => s)).not.toContain(except);
        }
      }
    }
    // the one-statement path ran for the queries that found words (not for the one that did not)
    expect(oneStatement).toBeGreaterThanOrEqual(12);
  });
});
