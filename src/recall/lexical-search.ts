import { analyze } from './analyze.js';
import {
  DEFAULT_RANK_PARAMS,
  docKey,
  feedbackWeights,
  scoreRound,
  smooth,
  splitKey,
  topKeys,
  type CorpusStats,
  type Posting,
  type RankParams,
  type SessionStat,
  type TermStat,
} from './lexical-rank.js';
import { dateMatches, queryCues, TIME_TERMS } from './query-cues.js';

/** What a turn contributes once it is a candidate: its terms, speaker and date. */
export interface TurnMeta {
  session: string;
  seq: number;
  /** Only when asked for (feedback); otherwise empty. */
  terms: readonly string[];
  speaker: string | null;
  at: Date;
  /** The turn holds one of the time terms it was asked about. */
  timeWords: boolean;
}

/** The reads lexical search makes. The store implements it in SQL; it never writes. */
export interface LexicalIndexPort {
  /** Corpus statistics and the statistics of `terms`, read together. */
  lookup(terms: readonly string[]): Promise<{ corpus: CorpusStats; terms: Map<string, TermStat> }>;
  /**
   * All postings of `terms`, or only those inside `sessions` when it is given, with the
   * statistics of every session they fall in.
   */
  postings(
    terms: readonly string[],
    sessions: readonly string[] | null,
  ): Promise<{ postings: Map<string, Posting[]>; sessions: Map<string, SessionStat> }>;
  /** Speaker, date and time-word flag of some turns; their terms too when `withTerms`. */
  turns(
    keys: readonly { session: string; seq: number }[],
    timeTerms: readonly string[],
    withTerms: boolean,
  ): Promise<TurnMeta[]>;
}

export interface LexicalSearchOptions {
  /** Only turns of this session. */
  session?: string;
  /** How many turns to return. */
  limit: number;
  params?: Partial<RankParams>;
  /**
   * Postings read in full per query before the remaining (commoner) terms are read only inside
   * the sessions the rarer ones reached.
   */
  postingBudget?: number;
}

export interface ScoredTurn {
  session: string;
  seq: number;
  score: number;
}

const DEFAULT_POSTING_BUDGET = 4000;
/** Sessions the commoner terms are read in: the best by the rarer terms' hits. */
const CANDIDATE_SESSIONS = 64;
/** Candidates that get the metadata boosts (speaker, time words, session date). */
const BOOST_POOL = 100;

/**
 * Reads postings: terms in ascending df order are read in full while the budget lasts; the rest
 * only inside the candidate sessions (those where the rarer terms weigh most). The rarest term
 * is always read in full.
 */
async function readPostings(
  port: LexicalIndexPort,
  terms: readonly string[],
  stats: ReadonlyMap<string, TermStat>,
  corpusTurns: number,
  scope: string | undefined,
  budget: number,
  known: Map<string, Posting[]>,
  complete: Set<string>,
  sessions: Map<string, SessionStat>,
): Promise<void> {
  const wanted = terms
    .filter((t) => !known.has(t) && (stats.get(t)?.df ?? 0) > 0)
    .sort((a, b) => (stats.get(a)?.df ?? 0) - (stats.get(b)?.df ?? 0) || (a < b ? -1 : 1));
  if (wanted.length === 0) return;
  const take = async (list: readonly string[], only: readonly string[] | null): Promise<void> => {
    const got = await port.postings(list, only);
    for (const t of list) known.set(t, got.postings.get(t) ?? []);
    for (const [id, st] of got.sessions) sessions.set(id, st);
  };
  if (scope !== undefined) {
    await take(wanted, [scope]);
    for (const t of wanted) complete.add(t);
    return;
  }
  let used = [...known.values()].reduce((n, l) => n + l.length, 0);
  const full: string[] = [];
  const rest: string[] = [];
  for (const t of wanted) {
    const df = stats.get(t)?.df ?? 0;
    const first = known.size === 0 && full.length === 0;
    if (first || (rest.length === 0 && used + df <= budget)) {
      full.push(t);
      used += df;
    } else {
      rest.push(t);
    }
  }
  if (full.length > 0) {
    await take(full, null);
    for (const t of full) complete.add(t);
  }
  if (rest.length > 0) {
    const weight = new Map<string, number>();
    for (const [t, list] of known) {
      const w = Math.log(1 + corpusTurns / Math.max(1, stats.get(t)?.df ?? 1));
      for (const x of list) weight.set(x.session, (weight.get(x.session) ?? 0) + w);
    }
    const only = topKeys(weight, CANDIDATE_SESSIONS).sort();
    if (only.length === 0) for (const t of rest) known.set(t, []);
    else await take(rest, only);
  }
}

/** Ranks a subject's turns for a query. Read-only: every call goes through the port's reads. */
export async function lexicalSearch(
  port: LexicalIndexPort,
  query: string,
  options: LexicalSearchOptions,
): Promise<ScoredTurn[]> {
  const p: RankParams = { ...DEFAULT_RANK_PARAMS, ...options.params };
  const budget = options.postingBudget ?? DEFAULT_POSTING_BUDGET;
  const queryTerms = analyze(query);
  if (queryTerms.length === 0 || options.limit <= 0) return [];
  const weights = new Map<string, number>();
  for (const t of queryTerms) weights.set(t, (weights.get(t) ?? 0) + 1);

  const { corpus, terms: termStats } = await port.lookup([...weights.keys()]);
  if (corpus.turns === 0) return [];
  const postings = new Map<string, Posting[]>();
  const complete = new Set<string>();
  const sessions = new Map<string, SessionStat>();
  const read = (terms: readonly string[]): Promise<void> =>
    readPostings(
      port,
      terms,
      termStats,
      corpus.turns,
      options.session,
      budget,
      postings,
      complete,
      sessions,
    );
  await read([...weights.keys()]);
  let scores = scoreRound({ weights, corpus, termStats, postings, complete, sessions }, p);
  if (scores.size === 0) return [];

  const metaCache = new Map<string, TurnMeta>();
  const timeTerms = [...TIME_TERMS].sort();
  const meta = async (keys: readonly string[], withTerms: boolean): Promise<void> => {
    const missing = keys.filter(
      (k) => !metaCache.has(k) || (withTerms && metaCache.get(k)?.terms.length === 0),
    );
    if (missing.length === 0) return;
    for (const m of await port.turns(missing.map(splitKey), timeTerms, withTerms)) {
      metaCache.set(docKey(m.session, m.seq), m);
    }
  };

  if (p.feedbackDocs > 0 && p.feedbackTerms > 0 && p.feedbackWeight > 0) {
    const top = topKeys(scores, p.feedbackDocs);
    await meta(top, true);
    // speakers' names are everywhere in a conversation: they would only pull in its other turns
    const exclude = new Set(weights.keys());
    for (const k of top) {
      const speaker = metaCache.get(k)?.speaker;
      if (speaker) for (const t of analyze(speaker)) exclude.add(t);
    }
    const extra = feedbackWeights(
      top.map((k) => ({ score: scores.get(k) ?? 0, terms: metaCache.get(k)?.terms ?? [] })),
      exclude,
      p,
    );
    if (extra.size > 0) {
      for (const [t, st] of (await port.lookup([...extra.keys()])).terms) termStats.set(t, st);
      await read([...extra.keys()]);
      for (const [t, w] of extra) weights.set(t, w);
      scores = scoreRound({ weights, corpus, termStats, postings, complete, sessions }, p);
    }
  }

  scores = smooth(scores, sessions, p);
  const pool = topKeys(scores, Math.max(BOOST_POOL, options.limit));
  await meta(pool, false);
  const cues = queryCues(query);
  const queryWords = new Set(query.toLowerCase().match(/[a-z]+/g) ?? []);
  const named = new Set<string>();
  for (const k of pool) {
    const first = metaCache.get(k)?.speaker?.trim().split(/\s+/)[0]?.toLowerCase();
    if (first !== undefined && queryWords.has(first)) named.add(first);
  }
  const onlyNamed = named.size === 1 ? [...named][0] : undefined;
  const boosted = new Map<string, number>();
  for (const k of pool) {
    const m = metaCache.get(k);
    let s = scores.get(k) ?? 0;
    if (m !== undefined) {
      const first = m.speaker?.trim().split(/\s+/)[0]?.toLowerCase();
      if (onlyNamed !== undefined && first === onlyNamed) s *= p.speakerBoost;
      if (cues.temporal && m.timeWords) s *= p.timeWordBoost;
      if (dateMatches(cues, m.at)) s *= p.dateBoost;
    }
    boosted.set(k, s);
  }
  return topKeys(boosted, options.limit).map((k) => ({
    ...splitKey(k),
    score: boosted.get(k) ?? 0,
  }));
}
