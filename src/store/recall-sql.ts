import type { FactOrigin, FactStatus } from '../domain/fact.js';
import type { Receipt, ReceiptKind } from '../domain/receipt.js';
import type { TurnRole } from '../domain/turn.js';
import type { CorpusStats, Posting, SessionStat, TermStat } from '../recall/lexical-rank.js';
import type { LexicalIndexPort, TurnMeta } from '../recall/lexical-search.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A turn as recall returns it. */
export interface RecalledTurnRow {
  id: string;
  sessionId: string;
  seq: number;
  role: TurnRole;
  speaker: string | null;
  content: string;
  corrective: boolean;
  receipt: Receipt | null;
  recordedAt: Date;
}

/** A fact candidate: its passport columns and terms. */
export interface RecalledFactRow {
  id: string;
  slot: string;
  key: string | null;
  text: string;
  origin: FactOrigin;
  status: FactStatus;
  attested: boolean;
  evidenceTurnId: string | null;
  evidenceSessionId: string | null;
  evidenceSeq: number | null;
  evidenceQuote: string | null;
  evidenceTool: string | null;
  recordedAt: Date;
  statusAt: Date;
  validFrom: Date | null;
  validTo: Date | null;
  terms: string[];
}

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
      postings: (terms, sessions) => this.postings(terms, sessions),
      turns: (keys, timeTerms, withTerms) => this.turnMeta(keys, timeTerms, withTerms),
    };
  }

  /**
   * Corpus and term statistics in one statement. Lists come back as one delimited string per
   * column: on PGlite, decoding rows costs far more than the query, so recall asks for one row.
   * Terms, session ids and numbers never hold the separators (ASCII unit and record separators).
   */
  lookup(terms: readonly string[]): Promise<{ corpus: CorpusStats; terms: Map<string, TermStat> }> {
    return guard('reading recall statistics', async () => {
      const { rows } = await this.db.query<{ corpus: string | null; terms: string | null }>(
        `SELECT (SELECT concat_ws(E'\x1f', turns, sessions, term_len) FROM recall_corpus
                 WHERE subject_id = $1) AS corpus,
                (SELECT string_agg(concat_ws(E'\x1f', term, df, sdf), E'\x1e') FROM term_stats
                 WHERE subject_id = $1 AND term = ANY($2::text[])) AS terms`,
        [this.subjectId, terms],
      );
      const [turns = 0, sessions = 0, totalLen = 0] = split(rows[0]?.corpus ?? null).flatMap((r) =>
        r.map(Number),
      );
      const stats = new Map<string, TermStat>();
      for (const [term = '', df, sdf] of split(rows[0]?.terms ?? null)) {
        stats.set(term, { df: Number(df), sdf: Number(sdf) });
      }
      return { corpus: { turns, sessions, totalLen }, terms: stats };
    });
  }

  postings(
    terms: readonly string[],
    sessions: readonly string[] | null,
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
                (SELECT string_agg(concat_ws(E'\x1f', id, last_seq, term_len), E'\x1e')
                 FROM sessions
                 WHERE subject_id = $1 AND id IN (SELECT DISTINCT session_id FROM p)) AS s`,
        sessions === null ? [this.subjectId, terms] : [this.subjectId, terms, sessions],
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

  turnMeta(
    keys: readonly { session: string; seq: number }[],
    timeTerms: readonly string[],
    withTerms: boolean,
  ): Promise<TurnMeta[]> {
    return guard('reading the recall index', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT json_agg(json_build_array(t.session_id, t.seq, t.speaker,
                  (extract(epoch FROM t.recorded_at) * 1000)::float8,
                  coalesce(t.terms && $4::text[], false),
                  CASE WHEN $5 THEN t.terms END))::text AS doc
         FROM unnest($2::text[], $3::int[]) AS k(session_id, seq)
         JOIN turns t ON t.subject_id = $1 AND t.session_id = k.session_id AND t.seq = k.seq`,
        [this.subjectId, keys.map((k) => k.session), keys.map((k) => k.seq), timeTerms, withTerms],
      );
      const list = JSON.parse(rows[0]?.doc ?? 'null') as
        [string, number, string | null, number, boolean, string[] | null][] | null;
      return (list ?? []).map(([session, seq, speaker, at, timeWords, terms]) => ({
        session,
        seq,
        speaker,
        at: new Date(at),
        timeWords,
        terms: terms ?? [],
      }));
    });
  }

  turnsByKey(keys: readonly { session: string; seq: number }[]): Promise<RecalledTurnRow[]> {
    return guard('reading recalled turns', async () => {
      const { rows } = await this.db.query<{
        id: string;
        session_id: string;
        seq: number;
        role: TurnRole;
        speaker: string | null;
        content: string;
        corrective: boolean;
        receipt_kind: ReceiptKind | null;
        receipt_tools: string[] | null;
        receipt_sources: string[] | null;
        recorded_at: Date;
      }>(
        `SELECT t.id, t.session_id, t.seq, t.role, t.speaker, t.content, t.corrective,
                t.receipt_kind, t.receipt_tools, t.receipt_sources, t.recorded_at
         FROM unnest($2::text[], $3::int[]) AS k(session_id, seq)
         JOIN turns t ON t.subject_id = $1 AND t.session_id = k.session_id AND t.seq = k.seq`,
        [this.subjectId, keys.map((k) => k.session), keys.map((k) => k.seq)],
      );
      return rows.map((r) => ({
        id: r.id,
        sessionId: r.session_id,
        seq: r.seq,
        role: r.role,
        speaker: r.speaker,
        content: r.content,
        corrective: r.corrective,
        receipt:
          r.receipt_kind === null
            ? null
            : r.receipt_kind === 'tools'
              ? { kind: 'tools', tools: r.receipt_tools ?? [], sources: r.receipt_sources ?? [] }
              : { kind: r.receipt_kind },
        recordedAt: r.recorded_at,
      }));
    });
  }

  /**
   * Facts holding any of the terms, in the given statuses (optionally with evidence in one
   * session), newest first: id, origin and terms only, as one delimited string.
   */
  factCandidates(
    terms: readonly string[],
    statuses: readonly FactStatus[],
    session: string | null,
    limit: number,
  ): Promise<{ id: string; origin: FactOrigin; terms: string[] }[]> {
    return guard('reading recalled facts', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT string_agg(concat_ws(E'\\x1f', id, origin, array_to_string(terms, ' ')), E'\\x1e'
                           ORDER BY recorded_at DESC, id) AS doc
         FROM (SELECT id, origin, terms, recorded_at FROM facts
               WHERE subject_id = $1 AND terms && $2::text[] AND status = ANY($3::text[])
                 ${session === null ? '' : 'AND evidence_session_id = $5'}
               ORDER BY recorded_at DESC, id LIMIT $4) f`,
        session === null
          ? [this.subjectId, terms, statuses, limit]
          : [this.subjectId, terms, statuses, limit, session],
      );
      return split(rows[0]?.doc ?? null).map(([id = '', origin, words = '']) => ({
        id,
        origin: origin as FactOrigin,
        terms: words === '' ? [] : words.split(' '),
      }));
    });
  }

  /** Full rows of the facts recall returns. */
  factsByIds(ids: readonly string[]): Promise<RecalledFactRow[]> {
    return guard('reading recalled facts', async () => {
      const { rows } = await this.db.query<{
        id: string;
        slot: string;
        key: string | null;
        text: string;
        origin: FactOrigin;
        status: FactStatus;
        attested: boolean;
        evidence_turn_id: string | null;
        evidence_session_id: string | null;
        evidence_seq: number | null;
        evidence_quote: string | null;
        evidence_tool: string | null;
        recorded_at: Date;
        status_at: Date;
        valid_from: Date | null;
        valid_to: Date | null;
        terms: string[];
      }>(
        `SELECT id, slot, key, text, origin, status, attested, evidence_turn_id,
                evidence_session_id, evidence_seq, evidence_quote, evidence_tool, recorded_at,
                status_at, valid_from, valid_to, terms
         FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])`,
        [this.subjectId, ids],
      );
      return rows.map((r) => ({
        id: r.id,
        slot: r.slot,
        key: r.key,
        text: r.text,
        origin: r.origin,
        status: r.status,
        attested: r.attested,
        evidenceTurnId: r.evidence_turn_id,
        evidenceSessionId: r.evidence_session_id,
        evidenceSeq: r.evidence_seq,
        evidenceQuote: r.evidence_quote,
        evidenceTool: r.evidence_tool,
        recordedAt: r.recorded_at,
        statusAt: r.status_at,
        validFrom: r.valid_from,
        validTo: r.valid_to,
        terms: r.terms,
      }));
    });
  }
}

/** Records split on ASCII RS, fields on US. */
function split(text: string | null): string[][] {
  if (text === null || text === '') return [];
  return text.split('\x1e').map((r) => r.split('\x1f'));
}
