import type { FactStatus } from '../domain/fact.js';
import type { ReceiptKind } from '../domain/receipt.js';
import type {
  CandidatePostings,
  CandidateReadAhead,
  CorpusStats,
  LexicalIndexPort,
  Posting,
  RecalledFactRow,
  SessionStat,
  TermStat,
  TurnMeta,
} from '../domain/recall-index.js';
import type { TurnRole } from '../domain/turn.js';
import { FACT_ROW_JSON, parseFactRows } from './fact-row-json.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';
import { receiptFromColumns } from './turn-sql.js';

/** Recall's statements are fixed texts run on every query: kept prepared where possible. */
const PREPARED = { prepare: true } as const;

/**
 * Recall's reads: the lexical index of one subject (its SELECTs only; the index is written by
 * the turn insert and its trigger), and the rows recall returns.
 */
export class RecallSql {
  constructor(
    private readonly db: SqlExecutor,
    private readonly subjectId: string,
  ) {}

  /**
   * The port lexical search reads through, bound to this subject. `candidates`: the database
   * also chooses candidate sessions and reads their postings in one statement
   * (`candidatePostings`; arrival's bounded search), where recall.search sums the totals itself.
   */
  port(options: { candidates?: boolean } = {}): LexicalIndexPort {
    return {
      lookup: (terms) => this.lookup(terms),
      postings: (terms, sessions, withSessions) => this.postings(terms, sessions, withSessions),
      sessionTotals: (terms) => this.sessionTotals(terms),
      turns: (keys, withTerms) => this.turnMeta(keys, withTerms),
      ...(options.candidates === true
        ? {
            candidatePostings: (pick, weights, n, terms, except) =>
              this.candidatePostings(pick, weights, n, terms, except),
          }
        : {}),
    };
  }

  /**
   * Corpus and term statistics in one statement. Lists come back as one delimited string per
   * column: on PGlite, decoding rows costs far more than the query, so recall asks for one row.
   * Terms, session ids and numbers never hold the separators (ASCII unit and record separators).
   */
  lookup(terms: readonly string[]): Promise<{ corpus: CorpusStats; terms: Map<string, TermStat> }> {
    return this.scopedLookup(terms, null);
  }

  /**
   * The lookup, plus whether the session (when one is named) is one of this subject's: another
   * subject's session reads exactly like one that does not exist.
   */
  scopedLookup(
    terms: readonly string[],
    session: string | null,
  ): Promise<{
    corpus: CorpusStats;
    terms: Map<string, TermStat>;
    sessionExists: boolean;
  }> {
    return guard('reading recall statistics', async () => {
      const { rows } = await this.db.query<{
        corpus: string | null;
        terms: string | null;
        session: boolean;
      }>(
        `SELECT (SELECT concat_ws(E'\x1f', turns, sessions, term_len) FROM recall_corpus
                 WHERE subject_id = $1) AS corpus,
                (SELECT string_agg(concat_ws(E'\x1f', term, df, sdf), E'\x1e') FROM term_stats
                 WHERE subject_id = $1 AND term = ANY($2::text[])) AS terms,
                EXISTS (SELECT 1 FROM sessions WHERE subject_id = $1 AND id = $3) AS session`,
        [this.subjectId, terms, session],
        PREPARED,
      );
      const row = rows[0];
      const { corpus, terms: stats } = statisticsOf(row);
      return {
        corpus,
        terms: stats,
        sessionExists: row?.session === true,
      };
    });
  }

  postings(
    terms: readonly string[],
    sessions: readonly string[] | null,
    withSessions: boolean,
  ): Promise<{ postings: Map<string, Posting[]>; sessions: Map<string, SessionStat> }> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{ p: string | null; s: string | null }>(
        `WITH p AS (
           SELECT term, session_id, seq, tf, len FROM turn_postings
           WHERE subject_id = $1 AND term = ANY($2::text[])
             ${sessions === null ? '' : 'AND session_id = ANY($3::text[])'}
         )
         SELECT (SELECT string_agg(concat_ws(E'\x1f', term, session_id, seq, tf, len), E'\x1e')
                 FROM p) AS p,
                ${
                  !withSessions
                    ? 'NULL'
                    : // looked up by key (the planner cannot tell how few sessions the
                      // postings fall in, and would scan them all); within named sessions, a
                      // session with no posting is dropped as the postings are parsed
                      `(SELECT string_agg(concat_ws(E'\x1f', id, last_seq, term_len), E'\x1e')
                        FROM sessions WHERE subject_id = $1
                          AND ${
                            sessions === null
                              ? 'id = ANY (ARRAY(SELECT DISTINCT session_id FROM p))'
                              : 'id = ANY($3::text[])'
                          })`
                } AS s`,
        sessions === null ? [this.subjectId, terms] : [this.subjectId, terms, sessions],
        PREPARED,
      );
      const { postings, stats } = parsePostings(rows[0]?.p ?? null, rows[0]?.s ?? null);
      return { postings, sessions: stats };
    });
  }

  /**
   * LexicalIndexPort.candidatePostings: the candidate sessions chosen from the per-session totals
   * (migration 0015) as posting-reader.ts chooses them (summed in term order, ties by id in code
   * point order), and the postings of `terms` inside them with their statistics, in one statement.
   */
  candidatePostings(
    pick: readonly string[],
    weights: readonly number[],
    n: number,
    terms: readonly string[],
    except: string | null,
  ): Promise<CandidatePostings> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{
        c: string | null;
        p: string | null;
        s: string | null;
      }>(
        `WITH w AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS w(term, w)),
         ${candidateCtes('$2::text[]', '$5::text[]', '$4', '$6::text', pick.length)}
         SELECT ${CANDIDATE_COLUMNS}`,
        [this.subjectId, pick, weights, n, terms, except],
        PREPARED,
      );
      return candidatesOf(rows[0]);
    });
  }

  /**
   * The lookup of `terms`, and in the same statement, when posting-reader.ts's rule will read
   * candidate sessions for them, that read (`candidatePostings`) made ahead. The rule, as
   * relevantSearch and readPostings apply it: the terms any turn holds, rarest first (ties in
   * the order `terms` comes in: give it sorted), at most `rule.maxTerms` of them; when even the
   * rarest is in more than `rule.budget` turns, the terms picked are those fewest sessions hold
   * while their sessions add up to the budget (the first always), each weighing
   * ln(1 + turns / df). The caller checks the read against the arguments its own rule gives
   * (CandidateReadAhead): the logarithm here is the database's.
   */
  lookupWithCandidates(
    terms: readonly string[],
    rule: { maxTerms: number; budget: number; n: number; except: string | null },
  ): Promise<{
    corpus: CorpusStats;
    terms: Map<string, TermStat>;
    ahead: CandidateReadAhead | null;
  }> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{
        corpus: string | null;
        terms: string | null;
        w: string | null;
        k: string | null;
        c: string | null;
        p: string | null;
        s: string | null;
      }>(
        `WITH q AS (SELECT * FROM unnest($2::text[]) WITH ORDINALITY AS q(term, ord)),
         corpus AS (SELECT turns, sessions, term_len FROM recall_corpus WHERE subject_id = $1),
         ts AS (SELECT t.term, t.df, t.sdf, q.ord FROM term_stats t JOIN q ON q.term = t.term
                WHERE t.subject_id = $1 AND t.term = ANY($2::text[])),
         k AS (SELECT * FROM ts WHERE df > 0 ORDER BY df, ord LIMIT $3),
         pk AS (SELECT term, ord,
                       ln(1 + (SELECT turns FROM corpus) / greatest(1, df)::float8) AS w,
                       sum(sdf) OVER (ORDER BY sdf, ord ROWS UNBOUNDED PRECEDING) AS used,
                       row_number() OVER (ORDER BY sdf, ord) AS n
                FROM k WHERE (SELECT min(df) FROM k) > $4 AND (SELECT turns FROM corpus) > 0),
         w AS (SELECT term, w, n FROM pk WHERE n = 1 OR used <= $4),
         ${candidateCtes('ARRAY(SELECT term FROM w)', 'ARRAY(SELECT term FROM k)', '$5', '$6::text', null)}
         SELECT (SELECT concat_ws(E'\x1f', turns, sessions, term_len) FROM corpus) AS corpus,
                (SELECT string_agg(concat_ws(E'\x1f', term, df, sdf), E'\x1e') FROM ts) AS terms,
                (SELECT string_agg(concat_ws(E'\x1f', term, w), E'\x1e' ORDER BY n) FROM w) AS w,
                (SELECT string_agg(term, E'\x1e' ORDER BY df, ord) FROM k) AS k,
                ${CANDIDATE_COLUMNS}`,
        [this.subjectId, terms, rule.maxTerms, rule.budget, rule.n, rule.except],
        PREPARED,
      );
      const row = rows[0];
      const { corpus, terms: stats } = statisticsOf(row);
      const picked = split(row?.w ?? null);
      return {
        corpus,
        terms: stats,
        ahead:
          picked.length === 0
            ? null
            : {
                pick: picked.map(([term = '']) => term),
                weights: picked.map(([, w]) => Number(w)),
                n: rule.n,
                terms: split(row?.k ?? null).map(([term = '']) => term),
                except: rule.except,
                read: candidatesOf(row),
              },
      };
    });
  }

  /** Each session's total count of the terms (kept by the index trigger, migration 0015). */
  sessionTotals(terms: readonly string[]): Promise<Map<string, { session: string; tf: number }[]>> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT string_agg(concat_ws(E'\\x1f', term, session_id, tf), E'\\x1e') AS doc
         FROM session_terms WHERE subject_id = $1 AND term = ANY($2::text[])`,
        [this.subjectId, terms],
        PREPARED,
      );
      const out = new Map<string, { session: string; tf: number }[]>();
      for (const [term = '', session = '', n] of split(rows[0]?.doc ?? null)) {
        let list = out.get(term);
        if (list === undefined) out.set(term, (list = []));
        list.push({ session, tf: Number(n) });
      }
      return out;
    });
  }

  /**
   * Speaker, date, terms (when asked) and the whole row of some turns, as one JSON document; a
   * forgotten turn is not among them.
   */
  turnMeta(
    keys: readonly { session: string; seq: number }[],
    withTerms: boolean,
  ): Promise<TurnMeta[]> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT json_agg(json_build_array(t.session_id, t.seq, t.speaker,
                  (extract(epoch FROM t.recorded_at) * 1000)::float8,
                  CASE WHEN $4 THEN t.terms END, t.id, t.role, t.content, t.corrective,
                  t.receipt_kind, t.receipt_tools, t.receipt_sources,
                  (SELECT s.title FROM sessions s
                   WHERE s.subject_id = t.subject_id AND s.id = t.session_id)))::text AS doc
         FROM unnest($2::text[], $3::int[]) AS k(session_id, seq)
         -- one key lookup per asked turn, whatever the planner estimates for the subject (a
         -- plain join, planned on a stale estimate of one turn, scanned every turn of a
         -- 1,000-turn subject once per key: 50 ms on PGlite); LIMIT 1 keeps it a lookup
         CROSS JOIN LATERAL (
           SELECT * FROM turns t1
           WHERE t1.subject_id = $1 AND t1.session_id = k.session_id AND t1.seq = k.seq
             AND t1.forget_id IS NULL
           LIMIT 1) t`,
        [this.subjectId, keys.map((k) => k.session), keys.map((k) => k.seq), withTerms],
        PREPARED,
      );
      type Row = [
        string,
        number,
        string | null,
        number,
        string[] | null,
        string,
        TurnRole,
        string,
        boolean,
        ReceiptKind | null,
        string[] | null,
        string[] | null,
        string | null,
      ];
      const list = JSON.parse(rows[0]?.doc ?? 'null') as Row[] | null;
      return (list ?? []).map(
        ([
          session,
          seq,
          speaker,
          at,
          terms,
          id,
          role,
          content,
          corrective,
          kind,
          tools,
          sources,
          title,
        ]) => ({
          session,
          seq,
          terms: terms ?? [],
          turn: {
            id,
            role,
            speaker,
            content,
            corrective,
            receipt: receiptFromColumns(kind, tools, sources),
            recordedAt: new Date(at),
            sessionTitle: title,
          },
        }),
      );
    });
  }

  /**
   * Facts holding any of the terms, in the given statuses (optionally with evidence in one
   * session), newest first, whole rows with their terms, as one JSON document.
   */
  factCandidates(
    terms: readonly string[],
    statuses: readonly FactStatus[],
    session: string | null,
    limit: number,
  ): Promise<RecalledFactRow[]> {
    return guard('reading recalled facts', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT json_agg(${FACT_ROW_JSON} ORDER BY recorded_at DESC, id)::text AS doc
         FROM (SELECT * FROM facts
               WHERE subject_id = $1 AND terms && $2::text[] AND status = ANY($3::text[])
                 ${session === null ? '' : 'AND evidence_session_id = $5'}
               ORDER BY recorded_at DESC, id LIMIT $4) f`,
        session === null
          ? [this.subjectId, terms, statuses, limit]
          : [this.subjectId, terms, statuses, limit, session],
        PREPARED,
      );
      return parseFactRows(rows[0]?.doc ?? null);
    });
  }
}

/**
 * The candidate sessions `c` (the `n` sessions other than `except` with the highest sum over the
 * picked terms of w × tf / (tf + 1), summed in term order, ties by id in code point order) and
 * the postings `p` of the read terms inside them, as CTEs following one named `w(term, w)`, the
 * picked terms and their weights. `pickTerms` and `readTerms` are text[] expressions.
 *
 * A session sums one row per picked term it holds. Float addition is commutative but not
 * associative, so the order of the terms matters only from three on: with two picked terms the
 * plain sum is the ordered sum, bit for bit, and with one a session's sum is its one row. The
 * ordered aggregate sorts each session's rows apart (on PostgreSQL 15, one sort per session) and
 * grouping costs a sort of its own, so each runs only when the count of picked terms needs it.
 * `picked` is that count when the caller knows it (one branch is sent); null when the statement
 * works it out (three branches, of which the two the count rules out read nothing: each filter
 * is decided once).
 */
function candidateCtes(
  pickTerms: string,
  readTerms: string,
  n: string,
  except: string,
  picked: number | null,
): string {
  const from = `FROM session_terms st JOIN w ON w.term = st.term
           WHERE st.subject_id = $1 AND st.term = ANY(${pickTerms})
             AND (${except} IS NULL OR st.session_id <> ${except})`;
  const x = '(w.w * st.tf) / (st.tf + 1)::float8';
  const top = (by: string) => `ORDER BY ${by} DESC, st.session_id COLLATE "C" LIMIT ${n}`;
  // by the count of picked terms: one, two, three or more
  const branches = [
    { count: '= 1', rest: top(x) },
    { count: '= 2', rest: `GROUP BY st.session_id ${top(`sum(${x})`)}` },
    { count: '> 2', rest: `GROUP BY st.session_id ${top(`sum(${x} ORDER BY st.term)`)}` },
  ];
  const c =
    picked === null
      ? branches
          .map(
            (b) => `(SELECT st.session_id AS id ${from} AND (SELECT count(*) FROM w) ${b.count}
            ${b.rest})`,
          )
          .join('\n           UNION ALL\n           ')
      : `SELECT st.session_id AS id ${from}
            ${picked < 1 ? `AND false LIMIT ${n}` : (branches[Math.min(picked, 3) - 1]?.rest ?? '')}`;
  return `c AS (
           ${c}
         ),
         p AS (
           SELECT term, session_id, seq, tf, len FROM turn_postings
           WHERE subject_id = $1 AND term = ANY(${readTerms}) AND session_id IN (SELECT id FROM c)
         )`;
}

/**
 * The columns that return `candidateCtes`: the sessions, the postings and the sessions'
 * statistics (looked up by key: the planner cannot tell how few the candidates are; a session
 * with no posting is dropped as the postings are parsed, which costs less than asking here).
 */
const CANDIDATE_COLUMNS = `(SELECT string_agg(id, E'\x1e') FROM c) AS c,
         (SELECT string_agg(concat_ws(E'\x1f', term, session_id, seq, tf, len), E'\x1e')
          FROM p) AS p,
         (SELECT string_agg(concat_ws(E'\x1f', id, last_seq, term_len), E'\x1e')
          FROM sessions WHERE subject_id = $1 AND id = ANY (ARRAY(SELECT id FROM c))) AS s`;

/** What the candidate columns hold. */
function candidatesOf(
  row: { c: string | null; p: string | null; s: string | null } | undefined,
): CandidatePostings {
  return {
    sessions: split(row?.c ?? null).map(([id = '']) => id),
    ...parsePostings(row?.p ?? null, row?.s ?? null),
  };
}

/** The corpus and term statistics as their two columns hold them. */
function statisticsOf(row: { corpus: string | null; terms: string | null } | undefined): {
  corpus: CorpusStats;
  terms: Map<string, TermStat>;
} {
  const [turns = 0, sessions = 0, totalLen = 0] = split(row?.corpus ?? null).flatMap((r) =>
    r.map(Number),
  );
  const terms = new Map<string, TermStat>();
  for (const [term = '', df, sdf] of split(row?.terms ?? null)) {
    terms.set(term, { df: Number(df), sdf: Number(sdf) });
  }
  return { corpus: { turns, sessions, totalLen }, terms };
}

/**
 * Postings (term, session, seq, tf, len) and session statistics (id, turns, len) as read: the
 * statistics of the sessions the postings fall in, and no others. (Exported for its test.)
 */
export function parsePostings(
  p: string | null,
  s: string | null,
): { postings: Map<string, Posting[]>; stats: Map<string, SessionStat> } {
  const postings = new Map<string, Posting[]>();
  const held = new Set<string>();
  // thousands of postings in runs of one term and one session: scanned in place, each run's
  // term and session taken once, the numbers read digit by digit (no array per record)
  if (p !== null && p !== '') {
    let i = 0;
    let term: string | null = null;
    let session: string | null = null;
    let list: Posting[] = [];
    /** The end of the field at `i` (the last of a record ends at RS or the text's end). */
    const end = (last: boolean): number => {
      const at = p.indexOf(last ? '\x1e' : '\x1f', i);
      return at < 0 ? p.length : at;
    };
    /** The text from `i` to `to`: `known` itself when it is the same (a run goes on). */
    const text = (to: number, known: string | null): string =>
      known !== null && to - i === known.length && p.startsWith(known, i) ? known : p.slice(i, to);
    /** A field of digits as a number (anything else as Number reads it). */
    const int = (to: number): number => {
      let n = 0;
      for (let j = i; j < to; j++) {
        const c = p.charCodeAt(j) - 48;
        if (c < 0 || c > 9) return Number(p.slice(i, to));
        n = n * 10 + c;
      }
      return n;
    };
    while (i < p.length) {
      let to = end(false);
      const t = text(to, term);
      if (t !== term) {
        term = t;
        let known = postings.get(t);
        if (known === undefined) postings.set(t, (known = []));
        list = known;
      }
      i = to + 1;
      to = end(false);
      const next = text(to, session);
      if (next !== session) {
        session = next;
        held.add(session);
      }
      i = to + 1;
      to = end(false);
      const seq = int(to);
      i = to + 1;
      to = end(false);
      const tf = int(to);
      i = to + 1;
      to = end(true);
      const len = int(to);
      i = to + 1;
      list.push({ session, seq, tf, len });
    }
  }
  const stats = new Map<string, SessionStat>();
  for (const [id = '', turns, len] of split(s)) {
    if (held.has(id)) stats.set(id, { turns: Number(turns), len: Number(len) });
  }
  return { postings, stats };
}

/** Records split on ASCII RS, fields on US. */
function split(text: string | null): string[][] {
  if (text === null || text === '') return [];
  return text.split('\x1e').map((r) => r.split('\x1f'));
}
