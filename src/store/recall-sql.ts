import type { FactStatus } from '../domain/fact.js';
import type { ReceiptKind } from '../domain/receipt.js';
import type {
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

  /** The port lexical search reads through, bound to this subject. */
  port(): LexicalIndexPort {
    return {
      lookup: (terms) => this.lookup(terms),
      postings: (terms, sessions, withSessions) => this.postings(terms, sessions, withSessions),
      sessionTotals: (terms) => this.sessionTotals(terms),
      turns: (keys, withTerms) => this.turnMeta(keys, withTerms),
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
      const [turns = 0, sessions = 0, totalLen = 0] = split(row?.corpus ?? null).flatMap((r) =>
        r.map(Number),
      );
      const stats = new Map<string, TermStat>();
      for (const [term = '', df, sdf] of split(row?.terms ?? null)) {
        stats.set(term, { df: Number(df), sdf: Number(sdf) });
      }
      return {
        corpus: { turns, sessions, totalLen },
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
                    : // within named sessions, those are looked up by key (the planner cannot
                      // tell how few sessions the postings fall in, and would scan them all)
                      `(SELECT string_agg(concat_ws(E'\x1f', id, last_seq, term_len), E'\x1e')
                        FROM sessions WHERE subject_id = $1
                          AND ${
                            sessions === null
                              ? 'id = ANY (ARRAY(SELECT DISTINCT session_id FROM p))'
                              : 'id = ANY($3::text[]) AND id IN (SELECT session_id FROM p)'
                          })`
                } AS s`,
        sessions === null ? [this.subjectId, terms] : [this.subjectId, terms, sessions],
        PREPARED,
      );
      const out = new Map<string, Posting[]>();
      for (const [term = '', session = '', seq, tf, len] of split(rows[0]?.p ?? null)) {
        let list = out.get(term);
        if (list === undefined) out.set(term, (list = []));
        list.push({ session, seq: Number(seq), tf: Number(tf), len: Number(len) });
      }
      const stats = new Map<string, SessionStat>();
      for (const [id = '', turns, len] of split(rows[0]?.s ?? null)) {
        stats.set(id, { turns: Number(turns), len: Number(len) });
      }
      return { postings: out, sessions: stats };
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

  /** Speaker, date, terms (when asked) and the whole row of some turns, as one JSON document. */
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
         JOIN turns t ON t.subject_id = $1 AND t.session_id = k.session_id AND t.seq = k.seq`,
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

/** Records split on ASCII RS, fields on US. */
function split(text: string | null): string[][] {
  if (text === null || text === '') return [];
  return text.split('\x1e').map((r) => r.split('\x1f'));
}
