/**
 * Recall as arrival's `relevant` block asks it, within the arrival's latency targets: lexical
 * only (no query embedding before the first token), turns within a smaller postings and boost
 * budget and without the turns of the arrival's own session, and facts ranked in memory over the
 * live set of the arrival's trust view (no fact query, no second trust read). `recall.search`
 * and its defaults are not changed by any of this.
 */
import { analyze } from '../domain/text/analyze.js';
import type { Fact } from '../domain/fact.js';
import type {
  CandidateReadAhead,
  CorpusStats,
  LexicalIndexPort,
  TermStat,
} from '../domain/recall-index.js';
import type { TrustView } from '../domain/trust.js';
import { RecallSql } from '../store/recall-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { bm25Term, DEFAULT_RANK_PARAMS, idf, type RankParams } from './lexical-rank.js';
import { lexicalSearch, type ScoredTurn } from './lexical-search.js';
import { fuse } from './recall-fusion.js';
import { factItem, isPrimary, rowOfFact, SECONDARY_WEIGHT, turnItem } from './recall-items.js';
import type { RecallItem } from './recall-types.js';

/**
 * The ranking parameters of the bounded path: the defaults, with fewer postings read in full,
 * fewer candidate sessions and a smaller pool of turns that get the boosts (the pool's rows are
 * what the ranking reads last, content and all).
 */
export const RELEVANT_RANK_PARAMS: RankParams = {
  ...DEFAULT_RANK_PARAMS,
  postingBudget: 400,
  candidateSessions: 8,
  boostPool: 24,
};

/**
 * The most distinct message terms the turn ranking reads postings for: the rarest (they carry
 * the most weight); a pasted document does not make arrival read the whole index. Facts are
 * ranked by every term (in memory, cheap).
 */
export const RELEVANT_MAX_TERMS = 32;

/** A recalled item as the bounded search gives it: a turn's passport names its session's title. */
export type RelevantItem = RecallItem & { passport: { sessionTitle?: string | null } };

/** What the bounded search takes. */
export interface RelevantSearchOptions {
  /** How many items, turns and facts fused (at most this many of each are ranked). */
  k: number;
  /** Turns of this session are left out of the ranking (the host has them in its history). */
  exceptSession: string | null;
  /**
   * The arrival's trust view: facts come only from its live set, as it verified them. Awaited
   * once the turn ranking's first read is on its way (no connection is held meanwhile).
   */
  view: Promise<TrustView>;
}

/**
 * The live facts of a view by term (made once per view: a kept view serves many arrivals). A
 * posting is a fact's number (its place in `facts`) and the term's frequency in it.
 */
interface FactIndex {
  facts: readonly Fact[];
  /** Each fact's number of terms. */
  lens: Uint32Array;
  /** 1 for a fact that is primary evidence (did, saw), 0 for inferred and summarized. */
  primary: Uint8Array;
  byTerm: Map<string, { fact: number[]; tf: number[] }>;
  /**
   * Scratch for one ranking, by fact number, made once with the index (a kept view serves many
   * arrivals; a common word touches thousands of facts, and fresh arrays of them on every
   * arrival were the largest part of what an arrival allocated). A ranking runs to its end
   * without yielding, and leaves every entry it set back at 0.
   */
  scores: Float64Array;
  seen: Uint8Array;
  touched: Int32Array;
}

const factIndexes = new WeakMap<TrustView, FactIndex>();

function factIndexOf(view: TrustView): FactIndex {
  let index = factIndexes.get(view);
  if (index === undefined) {
    const facts = view.live;
    const lens = new Uint32Array(facts.length);
    const primary = new Uint8Array(facts.length);
    const byTerm = new Map<string, { fact: number[]; tf: number[] }>();
    facts.forEach((fact, i) => {
      // the terms the store keeps for a fact are analyze(text) too (fact-sql.ts)
      const terms = analyze(fact.text);
      lens[i] = terms.length;
      primary[i] = isPrimary(fact.origin) ? 1 : 0;
      const tf = new Map<string, number>();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, f] of tf) {
        let list = byTerm.get(t);
        if (list === undefined) byTerm.set(t, (list = { fact: [], tf: [] }));
        list.fact.push(i);
        list.tf.push(f);
      }
    });
    index = {
      facts,
      lens,
      primary,
      byTerm,
      scores: new Float64Array(facts.length),
      seen: new Uint8Array(facts.length),
      touched: new Int32Array(facts.length),
    };
    factIndexes.set(view, index);
  }
  return index;
}

/**
 * The view's live facts ranked for the query, best `k`: the BM25 recall's fact ranking uses
 * (fact-rank.ts: the turn corpus's statistics, secondary facts discounted), over every live
 * fact holding a query term rather than over candidates read from the store.
 */
export function rankLiveFacts(
  view: TrustView,
  query: ReadonlyMap<string, number>,
  lookup: { corpus: CorpusStats; terms: ReadonlyMap<string, TermStat> },
  k: number,
  p: RankParams = DEFAULT_RANK_PARAMS,
): { fact: Fact; score: number }[] {
  if (query.size === 0 || view.live.length === 0 || k < 1) return [];
  const { facts, lens, primary, byTerm, scores, seen, touched } = factIndexOf(view);
  const n = Math.max(lookup.corpus.turns, 1);
  const avgLen = lookup.corpus.turns === 0 ? 8 : lookup.corpus.totalLen / lookup.corpus.turns;
  let count = 0;
  try {
    for (const [term, weight] of query) {
      const list = byTerm.get(term);
      if (list === undefined) continue;
      const w = weight * idf(n, lookup.terms.get(term)?.df ?? 0, p.idfFloor);
      for (let j = 0; j < list.fact.length; j++) {
        const i = list.fact[j] as number;
        if (seen[i] === 0) {
          seen[i] = 1;
          touched[count++] = i;
        }
        scores[i] =
          (scores[i] as number) + bm25Term(w, list.tf[j] as number, lens[i] as number, avgLen, p);
      }
    }
    // the best k of the thousands a common word touches, kept sorted as they are found (no map,
    // no sort of them all): higher score first, primary evidence first at an equal score, then id
    const before = (a: number, b: number): boolean => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      if (sa !== sb) return sa > sb;
      if (primary[a] !== primary[b]) return primary[a] === 1;
      return (facts[a] as Fact).id < (facts[b] as Fact).id;
    };
    const best: number[] = [];
    for (let t = 0; t < count; t++) {
      const i = touched[t] as number;
      const score = (scores[i] as number) * (primary[i] === 1 ? 1 : SECONDARY_WEIGHT);
      scores[i] = score;
      if (!(score > 0)) continue;
      if (best.length === k && !before(i, best[k - 1] as number)) continue;
      let at = best.length;
      while (at > 0 && before(i, best[at - 1] as number)) at--;
      best.splice(at, 0, i);
      if (best.length > k) best.pop();
    }
    return best.map((i) => ({ fact: facts[i] as Fact, score: scores[i] as number }));
  } finally {
    // the scratch as it was found: every entry this ranking set, back at 0
    for (let t = 0; t < count; t++) {
      const i = touched[t] as number;
      scores[i] = 0;
      seen[i] = 0;
    }
  }
}

/**
 * The index as the ranking sees it with one session left out: its postings and per-session
 * totals are dropped as they are read, so it neither fills the ranks nor takes a candidate
 * session's place. (Its turns still count in the corpus statistics, as every turn does.)
 */
export function withoutSession(port: LexicalIndexPort, session: string): LexicalIndexPort {
  return {
    lookup: (terms) => port.lookup(terms),
    async postings(terms, sessions, withSessions) {
      const only = sessions === null ? null : sessions.filter((s) => s !== session);
      if (only !== null && only.length === 0) return { postings: new Map(), sessions: new Map() };
      const got = await port.postings(terms, only, withSessions);
      for (const [term, list] of got.postings) {
        got.postings.set(
          term,
          list.filter((x) => x.session !== session),
        );
      }
      got.sessions.delete(session);
      return got;
    },
    async sessionTotals(terms) {
      const got = await port.sessionTotals(terms);
      for (const [term, list] of got) {
        got.set(
          term,
          list.filter((x) => x.session !== session),
        );
      }
      return got;
    },
    turns: (keys, withTerms) =>
      port.turns(
        keys.filter((k) => k.session !== session),
        withTerms,
      ),
    // the session is no candidate: left out before the choice, as from the totals above
    ...(port.candidatePostings === undefined
      ? {}
      : {
          candidatePostings: (pick, weights, n, terms) =>
            (port.candidatePostings as NonNullable<LexicalIndexPort['candidatePostings']>)(
              pick,
              weights,
              n,
              terms,
              session,
            ),
        }),
  };
}

/** Weights the rule and the database computed alike, but for the last bits of a logarithm. */
function sameWeight(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a));
}

/** Whether two lists hold the same strings (in any order, each once). */
function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const inB = new Set(b);
  return a.length === b.length && new Set(a).size === a.length && a.every((t) => inB.has(t));
}

/**
 * The port with a candidate read made ahead (RecallSql.lookupWithCandidates): the first
 * `candidatePostings` question with its arguments (the same picked terms in the same order,
 * their weights, session count, read terms and session left out) gets it without a read; any
 * other question is read as asked.
 */
export function withReadAhead(
  port: LexicalIndexPort,
  ahead: CandidateReadAhead | null,
): LexicalIndexPort {
  const read = port.candidatePostings;
  if (ahead === null || read === undefined) return port;
  let unused: CandidateReadAhead | null = ahead;
  return {
    ...port,
    candidatePostings(pick, weights, n, terms, except) {
      const a = unused;
      if (
        a !== null &&
        n === a.n &&
        except === a.except &&
        pick.length === a.pick.length &&
        pick.every(
          (t, i) => t === a.pick[i] && sameWeight(weights[i] as number, a.weights[i] as number),
        ) &&
        sameSet(terms, a.terms)
      ) {
        unused = null;
        return Promise.resolve(a.read);
      }
      return read.call(port, pick, weights, n, terms, except);
    },
  };
}

/**
 * The best `k` turns (outside `exceptSession`) and live facts for an arrival's message, fused
 * as recall fuses its lists. Only reads: every statement is one of RecallSql's SELECTs, sent on
 * its own (not in a transaction: no BEGIN, SET and COMMIT round trips in the arrival's
 * critical path, and nothing holds a connection while the view is awaited). The statistics and
 * the postings may then come from snapshots a turn apart, which moves a score, never a fact.
 */
export async function relevantSearch(
  client: SqlClient,
  subject: string,
  query: string,
  options: RelevantSearchOptions,
): Promise<RelevantItem[]> {
  const { k, exceptSession } = options;
  const p = RELEVANT_RANK_PARAMS;
  const analysed = analyze(query);
  const weights = new Map<string, number>();
  for (const t of analysed) weights.set(t, (weights.get(t) ?? 0) + 1);
  if (weights.size === 0 || k < 1) return [];
  const sql = new RecallSql(client, subject);
  // over a socket, the statistics and the candidate read the rule below will ask for come in one
  // statement (the terms sorted as the rule breaks ties: by UTF-16 code units)
  const lookup = client.capabilities.roundTrips
    ? await sql.lookupWithCandidates([...weights.keys()].sort(), {
        maxTerms: RELEVANT_MAX_TERMS,
        budget: p.postingBudget,
        n: p.candidateSessions,
        except: exceptSession,
      })
    : { ...(await sql.lookup([...weights.keys()])), ahead: null };
  // the rarest terms the turns hold, at most RELEVANT_MAX_TERMS (a term no turn holds
  // reaches no turn)
  const df = (t: string): number => lookup.terms.get(t)?.df ?? 0;
  const kept = new Set(
    [...weights.keys()]
      .filter((t) => df(t) > 0)
      .sort((a, b) => df(a) - df(b) || (a < b ? -1 : 1))
      .slice(0, RELEVANT_MAX_TERMS),
  );
  // the candidate sessions chosen and their postings read in one statement: the one above,
  // when the rule asks for what it read
  const base = withReadAhead(sql.port({ candidates: true }), lookup.ahead);
  const port = exceptSession === null ? base : withoutSession(base, exceptSession);
  const searching: Promise<ScoredTurn[]> =
    kept.size === 0
      ? Promise.resolve([])
      : lexicalSearch(port, query, {
          limit: k,
          params: p,
          terms: analysed.filter((t) => kept.has(t)),
          // the search reads term statistics again as it extends the query; these are its own
          lookup: { corpus: lookup.corpus, terms: new Map(lookup.terms) },
        });
  searching.catch(() => undefined);
  // the facts are ranked while the database reads the turns: once the turn ranking has sent its
  // next read (it runs on promises already settled, up to that read: this waits a turn of the
  // event loop, so it goes first), and while the database answers it
  await new Promise<void>((resolve) => setImmediate(resolve));
  const facts = rankLiveFacts(await options.view, weights, lookup, k, p);
  const turns = await searching;
  // the titles came with the turns' rows: the block needs no read of its own for them
  const titles = new Map(turns.map((r) => [r.turn.id, r.turn.sessionTitle ?? null]));
  const fused: RelevantItem[] = fuse(
    [
      {
        items: turns
          .filter((r) => r.session !== exceptSession)
          .map((r) => turnItem(r.session, r.seq, r.turn, r.score)),
        weight: 1,
      },
      { items: facts.map((f) => factItem(rowOfFact(f.fact), f.score)), weight: 1 },
    ],
    k,
  );
  return fused.map((item) =>
    item.kind === 'turn' && titles.has(item.id)
      ? { ...item, passport: { ...item.passport, sessionTitle: titles.get(item.id) ?? null } }
      : item,
  );
}
