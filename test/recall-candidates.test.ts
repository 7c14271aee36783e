// Arrival's bounded search lets the database choose the candidate sessions and read their
// postings in one statement (RecallSql.candidatePostings); recall.search sums the per-session
// totals in code (posting-reader.ts). Both must choose the same sessions and rank the same turns,
// with and without the arrival's session left out, on both engines; the control shows the
// one-statement path really ran (and that the plain port never takes it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LexicalIndexPort } from '../src/domain/recall-index.js';
import { storeClient } from '../src/engine/test-access.js';
import { lexicalSearch } from '../src/recall/lexical-search.js';
import {
  RELEVANT_RANK_PARAMS,
  relevantSearch,
  withoutSession,
  withReadAhead,
} from '../src/recall/relevant-search.js';
import { createNodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { rememberingVerifier } from '../src/domain/decision-chain.js';
import { createTrustVerifier } from '../src/trust/trust-verifier.js';
import type { SqlClient } from '../src/store/sql-client.js';
import { analyze } from '../src/domain/text/analyze.js';
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

/** The port with each `candidatePostings` question told to `seen` before it is read. */
function spied(
  port: LexicalIndexPort,
  seen: (...args: Parameters<NonNullable<LexicalIndexPort['candidatePostings']>>) => void,
): LexicalIndexPort {
  const inner = port.candidatePostings;
  if (inner === undefined) return port;
  return {
    ...port,
    candidatePostings: (...args) => {
      seen(...args);
      return inner(...args);
    },
  };
}

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
    const counted = (port: LexicalIndexPort) => spied(port, () => oneStatement++);
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

  it('with no candidate session asked for, recall answers nothing rather than failing (and a control)', async () => {
    const me = t.engine.subject('u');
    const params = { postingBudget: 1, candidateSessions: 0 };
    // topKeys once read past its empty buffer here: a TypeError with no code
    expect(await me.recall.search('budget review', { k: 5, params })).toEqual([]);
    const some = await me.recall.search('budget review', {
      k: 5,
      params: { ...params, candidateSessions: 2 },
    });
    expect(some.length).toBeGreaterThan(0);
  });

  it('with one, two and three or more picked terms: the same sessions as summed in code (one row, the plain sum, the ordered sum)', async () => {
    // "harbor", "lantern" and "meadow" each in every turn of four sessions (df 24, sdf 4),
    // "orchard" in five (df 30): with a budget of 12 the rule picks three terms for the three,
    // two for "harbor orchard"; the sessions sum one, two or three terms, in different amounts
    const me = t.engine.subject('v');
    await t.engine.subjects.create('v');
    const holds: Record<string, number[]> = {
      harbor: [0, 1, 2, 3],
      lantern: [1, 2, 3, 4],
      meadow: [2, 3, 4, 5],
      orchard: [5, 6, 7, 8, 9],
    };
    const mine: string[] = [];
    for (let s = 0; s < 10; s++) {
      const { id } = await me.sessions.create();
      mine.push(id);
      for (let i = 0; i < 6; i++) {
        const words = Object.entries(holds)
          .filter(([, in_]) => in_.includes(s))
          // some turns say a word twice: the sessions' totals differ
          .map(([w], j) => ((i + j + s) % 3 === 0 ? `${w} ${w}` : w));
        await me.turns.add({ sessionId: id, role: 'user', content: `${words.join(' ')} walk` });
      }
    }
    const params = { ...RELEVANT_RANK_PARAMS, postingBudget: 12, candidateSessions: 3 };
    const sql = new RecallSql(storeClient(t.engine), 'v');
    const picks: number[] = [];
    const counted = (port: LexicalIndexPort) => spied(port, (pick) => picks.push(pick.length));
    const queries = [
      'harbor lantern meadow',
      'harbor lantern meadow orchard',
      'harbor orchard',
      'lantern meadow walk',
      'harbor',
    ];
    for (const query of queries) {
      for (const except of [null, mine[2] ?? '', mine[5] ?? '']) {
        const run = async (candidates: boolean) => {
          const base = counted(sql.port({ candidates }));
          const port = except === null ? base : withoutSession(base, except);
          return (await lexicalSearch(port, query, { limit: 8, params })).map((r) => [
            r.session,
            r.seq,
            r.score,
          ]);
        };
        const inCode = await run(false);
        const inDatabase = await run(true);
        expect(inDatabase.length, query).toBeGreaterThan(0);
        expect(inDatabase, `${query} (except ${except})`).toEqual(inCode);
        // and the read made ahead by the lookup is the same read
        const terms = [...new Set(analyze(query))].sort();
        const got = await sql.lookupWithCandidates(terms, {
          maxTerms: 32,
          budget: params.postingBudget,
          n: params.candidateSessions,
          except,
        });
        const before = picks.length;
        const base = withReadAhead(counted(sql.port({ candidates: true })), got.ahead);
        const port = except === null ? base : withoutSession(base, except);
        const ahead = (
          await lexicalSearch(port, query, {
            limit: 8,
            params,
            lookup: { corpus: got.corpus, terms: new Map(got.terms) },
          })
        ).map((r) => [r.session, r.seq, r.score]);
        expect(ahead, `${query} ahead (except ${except})`).toEqual(inCode);
        // the read ahead answered: no read of its own
        expect(picks.length).toBe(before);
      }
    }
    // every branch of the sum ran: one, two, and three picked terms
    expect(new Set(picks)).toEqual(new Set([1, 2, 3]));
    // and the database summed in term order exactly when it had to: one picked term is sorted
    // by its one row, two by the plain sum, three or more by the ordered sum; the branches the
    // count rules out read nothing
    const client = storeClient(t.engine);
    let statement: { sql: string; params: readonly unknown[] } | null = null;
    const capturing = new RecallSql(
      {
        query: (text, params = [], options) => {
          statement = { sql: text, params };
          return client.query(text, params, options);
        },
        exec: (text) => client.exec(text),
      },
      'v',
    );
    /** The rows each branch of the statement just sent gave, by how it scores a session. */
    const branchRows = async () => {
      const ran = statement as { sql: string; params: readonly unknown[] } | null;
      if (ran === null) throw new Error('no statement');
      const { rows } = await client.query<Record<string, string>>(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${ran.sql}`,
        ran.params,
      );
      // each branch is a Limit over a sort by its score (-1: no such branch in the statement)
      const lines = rows.map((r) => Object.values(r)[0] ?? '');
      const out = { single: -1, plain: -1, ordered: -1 };
      let limit: number | null = null;
      for (const line of lines) {
        const l = /Limit \(actual rows=(\d+)/.exec(line);
        if (l !== null) limit = Number(l[1]);
        else if (limit !== null && /Sort Key: .*session_id COLLATE "C"/.test(line)) {
          out[/ORDER BY/.test(line) ? 'ordered' : /sum\(/.test(line) ? 'plain' : 'single'] = limit;
          limit = null;
        }
      }
      return out;
    };
    // the lookup does not know the count before it runs: it sends the three branches
    const lookupBranches = async (query: string) => {
      await capturing.lookupWithCandidates([...new Set(analyze(query))].sort(), {
        maxTerms: 32,
        budget: params.postingBudget,
        n: params.candidateSessions,
        except: null,
      });
      return branchRows();
    };
    expect(await lookupBranches('harbor')).toEqual({ single: 3, plain: 0, ordered: 0 });
    expect(await lookupBranches('harbor orchard')).toEqual({ single: 0, plain: 3, ordered: 0 });
    expect(await lookupBranches('harbor lantern meadow')).toEqual({
      single: 0,
      plain: 0,
      ordered: 3,
    });
    // a read asked with its picked terms sends only the branch their count needs
    const readBranches = async (pick: string[]) => {
      await capturing.candidatePostings(
        pick,
        [1.5, 1.25, 1.125].slice(0, pick.length),
        3,
        pick,
        null,
      );
      return branchRows();
    };
    expect(await readBranches(['harbor'])).toEqual({ single: 3, plain: -1, ordered: -1 });
    expect(await readBranches(['harbor', 'orchard'])).toEqual({
      single: -1,
      plain: 3,
      ordered: -1,
    });
    expect(await readBranches(['harbor', 'lantern', 'meadow'])).toEqual({
      single: -1,
      plain: -1,
      ordered: 3,
    });
    expect((await capturing.candidatePostings([], [], 3, ['harbor'], null)).sessions).toEqual([]);
  });

  it('the lookup makes the candidate read ahead: the rule asks for exactly it, and nothing else is read', async () => {
    const sql = new RecallSql(storeClient(t.engine), 'u');
    const rule = (except: string | null, n = PARAMS.candidateSessions) => ({
      maxTerms: 32,
      budget: PARAMS.postingBudget,
      n,
      except,
    });
    let aheadUsed = 0;
    for (const query of QUERIES) {
      const terms = [...new Set(analyze(query))].sort();
      for (const except of [null, sessions[0] ?? '', sessions[5] ?? '']) {
        const got = await sql.lookupWithCandidates(terms, rule(except));
        // the statistics are the lookup's
        const plain = await sql.lookup(terms);
        expect(got.corpus).toEqual(plain.corpus);
        expect(got.terms).toEqual(plain.terms);
        let asked = 0;
        const run = async (ahead: typeof got.ahead) => {
          const counted = spied(sql.port({ candidates: true }), () => asked++);
          const base = withReadAhead(counted, ahead);
          const port = except === null ? base : withoutSession(base, except);
          return (
            await lexicalSearch(port, query, {
              limit: 8,
              params: PARAMS,
              lookup: { corpus: got.corpus, terms: new Map(got.terms) },
            })
          ).map((r) => [r.session, r.seq, r.score]);
        };
        const read = await run(null);
        const readBefore = asked;
        const ahead = await run(got.ahead);
        // the same turns, ranked alike, with no read of their own
        expect(ahead, `${query} (except ${except})`).toEqual(read);
        expect(asked).toBe(readBefore);
        if (got.ahead !== null) {
          aheadUsed++;
          expect(readBefore).toBe(1);
          // negative controls: a read ahead for another question is not taken for this one
          const other = await sql.lookupWithCandidates(terms, rule(except, 2));
          asked = 0;
          expect(await run(other.ahead)).toEqual(read);
          expect(asked).toBe(1);
          const elsewhere = await sql.lookupWithCandidates(
            terms,
            rule(except === null ? (sessions[1] ?? '') : null),
          );
          asked = 0;
          expect(await run(elsewhere.ahead)).toEqual(read);
          expect(asked).toBe(1);
          // and one made with other weights (a statistic that moved) is not either
          asked = 0;
          const reweighed = { ...got.ahead, weights: got.ahead.weights.map((w) => w * 1.001) };
          expect(await run(reweighed)).toEqual(read);
          expect(asked).toBe(1);
        } else {
          // no read ahead when the rule asks for none
          expect(readBefore).toBe(0);
        }
      }
    }
    expect(aheadUsed).toBeGreaterThanOrEqual(12);
    // and none when the rarest word fits the budget (the rule reads its postings in full)
    const few = await sql.lookupWithCandidates(['courier'], { ...rule(null), budget: 1000 });
    expect(few.ahead).toBeNull();
    expect(few.terms.get('courier')?.df).toBeGreaterThan(0);
  });
});

describe.each(ENGINES)('relevantSearch reads the candidates with its lookup [%s]', (kind) => {
  let t: TestEngine;
  let current = '';
  beforeAll(async () => {
    t = await openTestEngine(kind);
    await t.engine.subjects.create('u');
    const me = t.engine.subject('u');
    // "budget" and "review" in more turns than the bounded search reads in full: a question in
    // those words takes the candidate path
    const words = ['invoice', 'courier', 'print shop', 'call'];
    for (let s = 0; s < 9; s++) {
      const { id } = await me.sessions.create();
      current = id;
      for (let i = 0; i < 50; i++) {
        const more = words[(s + i) % words.length] ?? '';
        await me.turns.add({
          sessionId: id,
          role: 'user',
          content: `budget review ${more} ${s} ${i}`,
        });
      }
    }
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  it('in one statement over a socket, in two in process; the same items either way', async () => {
    const client = storeClient(t.engine);
    const view = createTrustVerifier({
      client,
      crypto: rememberingVerifier(createNodeChainCrypto()),
      clock: () => new Date(),
    }).view('u');
    const run = async (roundTrips: boolean, query: string) => {
      const statements: string[] = [];
      const counting: SqlClient = {
        kind: client.kind,
        location: client.location,
        capabilities: { ...client.capabilities, roundTrips },
        query: (sql, params, options) => {
          statements.push(sql);
          return client.query(sql, params, options);
        },
        exec: (sql) => client.exec(sql),
        transaction: (fn) => client.transaction(fn),
        close: () => client.close(),
      };
      const items = await relevantSearch(counting, 'u', query, {
        k: 8,
        exceptSession: current,
        view,
      });
      return { items, statements: statements.length };
    };
    for (const query of ['budget review', 'the review of our budget']) {
      const apart = await run(false, query);
      const together = await run(true, query);
      expect(together.items.length).toBeGreaterThan(0);
      expect(together.items).toEqual(apart.items);
      // lookup, candidates, turns; then the lookup that read the candidates ahead, turns
      expect(apart.statements).toBe(3);
      expect(together.statements).toBe(2);
    }
    // the engine's own choice
    expect(client.capabilities.roundTrips).toBe(kind === 'postgres');
  });
});
