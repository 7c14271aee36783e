import type { LexicalIndexPort, Posting, SessionStat, TermStat } from '../domain/recall-index.js';
import { sessionOfDoc, topKeys, type DocPosting } from './lexical-rank.js';
import type { SessionNumbers } from './session-numbers.js';

/**
 * What one lexical search has read so far: the postings by term (as doc numbers), which terms
 * were read in full, and the statistics of the sessions they fall in.
 */
export interface SearchState {
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
export async function readPostings(st: SearchState, terms: readonly string[]): Promise<void> {
  const df = (t: string): number => st.stats.get(t)?.df ?? 0;
  const wanted = terms
    .filter((t) => !st.postings.has(t) && df(t) > 0)
    .sort((a, b) => df(a) - df(b) || (a < b ? -1 : 1));
  if (wanted.length === 0) return;
  // how much a term weighs in choosing candidate sessions (the rarer, the more)
  const weightOf = (t: string): number => Math.log(1 + st.corpusTurns / Math.max(1, df(t)));
  const keep = (
    list: readonly string[],
    got: { postings: Map<string, Posting[]>; sessions: Map<string, SessionStat> },
  ): void => {
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
  const take = async (
    list: readonly string[],
    only: readonly string[] | null,
    withSessions: boolean,
  ): Promise<void> => keep(list, await st.port.postings(list, only, withSessions));
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
    if (st.port.candidatePostings !== undefined) {
      // the same choice made by the database, with the postings, in one read
      const weights = pick.map(weightOf);
      const got = await st.port.candidatePostings(
        pick,
        weights,
        st.candidateSessions,
        wanted,
        null,
      );
      if (got.sessions.length === 0) for (const t of wanted) st.postings.set(t, []);
      else keep(wanted, { postings: got.postings, sessions: got.stats });
      return;
    }
    const totals = await st.port.sessionTotals(pick);
    const weight = new Map<number, number>();
    for (const [t, list] of totals) {
      const w = weightOf(t);
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
      const w = weightOf(t);
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
