import type { Receipt } from '../domain/receipt.js';
import type { TurnRole } from '../domain/turn.js';
import { analyze } from '../domain/analyze.js';
import {
  DEFAULT_RANK_PARAMS,
  docOf,
  feedbackWeights,
  scoreRound,
  seqOfDoc,
  sessionOfDoc,
  smooth,
  topKeys,
  type CorpusStats,
  type DocPosting,
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
  /** The row recall returns for the turn (the same read brings it). */
  turn: RecalledTurn;
  /** Only when asked for (feedback, or the time words of a "when" question); else empty. */
  terms: readonly string[];
}

/** A recalled turn as the store has it. */
export interface RecalledTurn {
  id: string;
  role: TurnRole;
  speaker: string | null;
  content: string;
  corrective: boolean;
  receipt: Receipt | null;
  recordedAt: Date;
}

/** The reads lexical search makes. The store implements it in SQL; it never writes. */
export interface LexicalIndexPort {
  /** Corpus statistics and the statistics of `terms`, read together. */
  lookup(terms: readonly string[]): Promise<{ corpus: CorpusStats; terms: Map<string, TermStat> }>;
  /**
   * All postings of `terms`, or only those inside `sessions` when it is given, with the
   * statistics of every session they fall in when `withSessions` (else an empty map).
   */
  postings(
    terms: readonly string[],
    sessions: readonly string[] | null,
    withSessions: boolean,
  ): Promise<{ postings: Map<string, Posting[]>; sessions: Map<string, SessionStat> }>;
  /** Each session's summed term frequency for each of `terms` (the database adds them up). */
  sessionTotals(terms: readonly string[]): Promise<Map<string, { session: string; tf: number }[]>>;
  /** Speaker and date of some turns; their terms too when `withTerms` (else empty). */
  turns(keys: readonly { session: string; seq: number }[], withTerms: boolean): Promise<TurnMeta[]>;
}

export interface LexicalSearchOptions {
  /** Only turns of this session. */
  session?: string;
  /** How many turns to return. */
  limit: number;
  params?: Partial<RankParams>;
  /** The query's analysed terms, when the caller already has them. */
  terms?: readonly string[];
  /** Extra analysed terms and their weights (a query term weighs 1 per occurrence). */
  expansions?: ReadonlyMap<string, number>;
  /** Corpus and term statistics the caller already read for these query terms. */
  lookup?: { corpus: CorpusStats; terms: Map<string, TermStat> };
}

export interface ScoredTurn {
  session: string;
  seq: number;
  score: number;
  turn: RecalledTurn;
}

/** Session ids as small numbers for the ranker, and back. */
class SessionNumbers {
  private readonly index = new Map<string, number>();
  readonly names: string[] = [];

  of(id: string): number {
    let n = this.index.get(id);
    if (n === undefined) {
      n = this.names.length;
      this.index.set(id, n);
      this.names.push(id);
    }
    return n;
  }

  doc(session: string, seq: number): number {
    return docOf(this.of(session), seq);
  }

  key(doc: number): { session: string; seq: number } {
    return { session: this.names[sessionOfDoc(doc)] ?? '', seq: seqOfDoc(doc) };
  }

  /** Orders session numbers by session id: numbering follows read order, ids do not. */
  readonly compareSessions = (a: number, b: number): number => {
    const na = this.names[a] ?? '';
    const nb = this.names[b] ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  };

  /** Orders docs by session id, then seq. */
  readonly compare = (a: number, b: number): number =>
    this.compareSessions(sessionOfDoc(a), sessionOfDoc(b)) || seqOfDoc(a) - seqOfDoc(b);
}

interface SearchState {
  port: LexicalIndexPort;
  stats: Map<string, TermStat>;
  corpusTurns: number;
  scope: string | undefined;
  budget: number;
  candidateSessions: number;
  numbers: SessionNumbers;
  postings: Map<string, DocPosting[]>;
  complete: Set<string>;
  sessions: Map<number, SessionStat>;
}

/**
 * Reads postings: terms in ascending df order are read in full while the budget lasts; the rest
 * only inside the candidate sessions (those where the rarer terms weigh most). The rarest term
 * is always read in full.
 */
async function readPostings(st: SearchState, terms: readonly string[]): Promise<void> {
  const df = (t: string): number => st.stats.get(t)?.df ?? 0;
  const wanted = terms
    .filter((t) => !st.postings.has(t) && df(t) > 0)
    .sort((a, b) => df(a) - df(b) || (a < b ? -1 : 1));
  if (wanted.length === 0) return;
  const take = async (
    list: readonly string[],
    only: readonly string[] | null,
    withSessions: boolean,
  ): Promise<void> => {
    const got = await st.port.postings(list, only, withSessions);
    for (const t of list) {
      st.postings.set(
        t,
        (got.postings.get(t) ?? []).map((x) => ({
          doc: st.numbers.doc(x.session, x.seq),
          tf: x.tf,
          len: x.len,
        })),
      );
    }
    for (const [id, stat] of got.sessions) st.sessions.set(st.numbers.of(id), stat);
  };
  if (st.scope !== undefined) {
    await take(wanted, [st.scope], !st.sessions.has(st.numbers.of(st.scope)));
    for (const t of wanted) st.complete.add(t);
    return;
  }
  const byName = st.numbers.compareSessions;
  const first = wanted[0] as string;
  if (st.postings.size === 0 && df(first) > st.budget) {
    // Even the rarest term is too common to read turn by turn: choose the candidate sessions
    // from per-session totals (the database sums them), then read every term inside those.
    const sdf = (t: string): number => st.stats.get(t)?.sdf ?? 0;
    const bySdf = [...wanted].sort((a, b) => sdf(a) - sdf(b) || (a < b ? -1 : 1));
    const pick: string[] = [];
    let sessionsRead = 0;
    for (const t of bySdf) {
      if (pick.length > 0 && sessionsRead + sdf(t) > st.budget) break;
      pick.push(t);
      sessionsRead += sdf(t);
    }
    const totals = await st.port.sessionTotals(pick);
    const weight = new Map<number, number>();
    for (const [t, list] of totals) {
      const w = Math.log(1 + st.corpusTurns / Math.max(1, df(t)));
      for (const x of list) {
        const s = st.numbers.of(x.session);
        weight.set(s, (weight.get(s) ?? 0) + (w * x.tf) / (x.tf + 1));
      }
    }
    const only = topKeys(weight, st.candidateSessions, byName)
      .map((n) => st.numbers.names[n] ?? '')
      .sort();
    if (only.length === 0) for (const t of wanted) st.postings.set(t, []);
    else await take(wanted, only, true);
    return;
  }
  let used = 0;
  for (const l of st.postings.values()) used += l.length;
  const full: string[] = [];
  const rest: string[] = [];
  for (const t of wanted) {
    const first = st.postings.size === 0 && full.length === 0;
    if (first || (rest.length === 0 && used + df(t) <= st.budget)) {
      full.push(t);
      used += df(t);
    } else {
      rest.push(t);
    }
  }
  if (full.length > 0) {
    await take(full, null, true);
    for (const t of full) st.complete.add(t);
  }
  if (rest.length > 0) {
    const weight = new Map<number, number>();
    for (const [t, list] of st.postings) {
      const w = Math.log(1 + st.corpusTurns / Math.max(1, df(t)));
      for (const x of list) {
        const s = sessionOfDoc(x.doc);
        weight.set(s, (weight.get(s) ?? 0) + w);
      }
    }
    const only = topKeys(weight, st.candidateSessions, byName)
      .map((n) => st.numbers.names[n] ?? '')
      .sort();
    if (only.length === 0) for (const t of rest) st.postings.set(t, []);
    // candidate sessions come from postings already read: their statistics are known
    else await take(rest, only, false);
  }
}

/** Ranks a subject's turns for a query. Read-only: every call goes through the port's reads. */
export async function lexicalSearch(
  port: LexicalIndexPort,
  query: string,
  options: LexicalSearchOptions,
): Promise<ScoredTurn[]> {
  const p: RankParams = { ...DEFAULT_RANK_PARAMS, ...options.params };
  const queryTerms = options.terms ?? analyze(query);
  if (queryTerms.length === 0 || options.limit <= 0) return [];
  const weights = new Map<string, number>();
  for (const t of queryTerms) weights.set(t, (weights.get(t) ?? 0) + 1);
  for (const [t, w] of options.expansions ?? []) if (!weights.has(t) && w > 0) weights.set(t, w);

  const { corpus, terms: stats } = options.lookup ?? (await port.lookup([...weights.keys()]));
  if (corpus.turns === 0) return [];
  const st: SearchState = {
    port,
    stats,
    corpusTurns: corpus.turns,
    scope: options.session,
    budget: p.postingBudget,
    candidateSessions: p.candidateSessions,
    numbers: new SessionNumbers(),
    postings: new Map(),
    complete: new Set(),
    sessions: new Map(),
  };
  const round = (): Map<number, number> =>
    scoreRound(
      {
        weights,
        corpus,
        termStats: stats,
        postings: st.postings,
        complete: st.complete,
        sessions: st.sessions,
      },
      p,
    );
  await readPostings(st, [...weights.keys()]);
  let scores = round();
  if (scores.size === 0) return [];

  const metaCache = new Map<number, TurnMeta>();
  const meta = async (docs: readonly number[], withTerms: boolean): Promise<void> => {
    const missing = docs.filter(
      (d) => !metaCache.has(d) || (withTerms && metaCache.get(d)?.terms.length === 0),
    );
    if (missing.length === 0) return;
    const keys = missing.map((d) => st.numbers.key(d));
    for (const m of await port.turns(keys, withTerms)) {
      metaCache.set(st.numbers.doc(m.session, m.seq), m);
    }
  };

  if (p.feedbackDocs > 0 && p.feedbackTerms > 0 && p.feedbackWeight > 0) {
    const top = topKeys(scores, p.feedbackDocs, st.numbers.compare);
    await meta(top, true);
    // speakers' names are everywhere in a conversation: they would only pull in its other turns
    const exclude = new Set(weights.keys());
    for (const d of top) {
      const speaker = metaCache.get(d)?.turn.speaker;
      if (speaker) for (const t of analyze(speaker)) exclude.add(t);
    }
    const extra = feedbackWeights(
      top.map((d) => ({ score: scores.get(d) ?? 0, terms: metaCache.get(d)?.terms ?? [] })),
      exclude,
      p,
    );
    if (extra.size > 0) {
      for (const [t, s] of (await port.lookup([...extra.keys()])).terms) stats.set(t, s);
      await readPostings(st, [...extra.keys()]);
      for (const [t, w] of extra) weights.set(t, w);
      scores = round();
    }
  }

  scores = smooth(scores, st.sessions, p);
  const pool = topKeys(scores, Math.max(p.boostPool, options.limit), st.numbers.compare);
  const cues = queryCues(query);
  // terms only when a time word can matter: a "when" question
  await meta(pool, cues.temporal && p.timeWordBoost !== 1);
  const queryWords = new Set(query.toLowerCase().match(/[a-z]+/g) ?? []);
  const firstName = (m: TurnMeta | undefined): string | undefined =>
    m?.turn.speaker?.trim().split(/\s+/)[0]?.toLowerCase();
  const named = new Set<string>();
  for (const d of pool) {
    const first = firstName(metaCache.get(d));
    if (first !== undefined && queryWords.has(first)) named.add(first);
  }
  const onlyNamed = named.size === 1 ? [...named][0] : undefined;
  const boosted = new Map<number, number>();
  for (const d of pool) {
    const m = metaCache.get(d);
    // a neighbour the smoothing reached past a session's last turn is not a turn
    if (m === undefined) continue;
    let s = scores.get(d) ?? 0;
    if (onlyNamed !== undefined && firstName(m) === onlyNamed) s *= p.speakerBoost;
    if (cues.temporal && m.terms.some((t) => TIME_TERMS.has(t))) s *= p.timeWordBoost;
    if (dateMatches(cues, m.turn.recordedAt)) s *= p.dateBoost;
    boosted.set(d, s);
  }
  // ties in score fall back to the session id and seq, the same on every engine
  const out: ScoredTurn[] = [];
  for (const d of topKeys(boosted, options.limit, st.numbers.compare)) {
    const m = metaCache.get(d);
    if (m !== undefined)
      out.push({ ...st.numbers.key(d), score: boosted.get(d) ?? 0, turn: m.turn });
  }
  return out;
}
