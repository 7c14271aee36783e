import type { Citation } from '../domain/fact.js';
import type { CheckedSentence, SentenceVerdict, SummaryTurn } from '../domain/summary-check.js';
import { citationsOf } from './fact-sql.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** One summarize run as stored: what it folded, what it stored, what changed. */
export interface SummaryRow {
  id: string;
  aspect: string;
  sessionId: string;
  previousId: string | null;
  factId: string | null;
  sentences: number;
  supported: number;
  kept: number;
  added: number;
  leftOut: number;
  promptVersion: string;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  createdAt: Date;
}

/** A summary row with its fact (status, text, citations; null when none) and its sentences. */
export interface StoredSummary extends SummaryRow {
  factStatus: string | null;
  factText: string | null;
  factCitations: Citation[] | null;
  sentenceRows: CheckedSentence[];
}

interface DbSummary {
  id: string;
  aspect: string;
  session_id: string;
  previous_id: string | null;
  fact_id: string | null;
  sentences: number;
  supported: number;
  kept: number;
  added: number;
  left_out: number;
  prompt_version: string;
  provider: string;
  model: string;
  input_tokens: string | number;
  output_tokens: string | number;
  created_at: Date;
  fact_status: string | null;
  fact_text: string | null;
  fact_citations: unknown;
}

const COLUMNS = `s.id, s.aspect, s.session_id, s.previous_id, s.fact_id, s.sentences, s.supported,
  s.kept, s.added, s.left_out, s.prompt_version, s.provider, s.model, s.input_tokens,
  s.output_tokens, s.created_at, f.status AS fact_status, f.text AS fact_text,
  f.evidence_citations AS fact_citations`;

const FROM = `FROM summaries s
  LEFT JOIN facts f ON f.subject_id = $1 AND f.id = s.fact_id`;

function toRow(r: DbSummary): Omit<StoredSummary, 'sentenceRows'> {
  return {
    id: r.id,
    aspect: r.aspect,
    sessionId: r.session_id,
    previousId: r.previous_id,
    factId: r.fact_id,
    sentences: r.sentences,
    supported: r.supported,
    kept: r.kept,
    added: r.added,
    leftOut: r.left_out,
    promptVersion: r.prompt_version,
    provider: r.provider,
    model: r.model,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    createdAt: r.created_at,
    factStatus: r.fact_status,
    factText: r.fact_text,
    factCitations: citationsOf(r.fact_citations),
  };
}

/** Summaries and their sentences: append-only, keyed by subject. */
export class SummarySql {
  constructor(private readonly db: SqlExecutor) {}

  insert(subjectId: string, row: SummaryRow, sentences: readonly CheckedSentence[]): Promise<void> {
    return guard('recording a summary', async () => {
      await this.db.query(
        `INSERT INTO summaries (subject_id, id, aspect, session_id, previous_id, fact_id, sentences,
           supported, kept, added, left_out, prompt_version, provider, model, input_tokens,
           output_tokens, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          subjectId,
          row.id,
          row.aspect,
          row.sessionId,
          row.previousId,
          row.factId,
          row.sentences,
          row.supported,
          row.kept,
          row.added,
          row.leftOut,
          row.promptVersion,
          row.provider,
          row.model,
          row.inputTokens,
          row.outputTokens,
          row.createdAt,
        ],
      );
      for (const s of sentences) {
        await this.db.query(
          `INSERT INTO summary_sentences (subject_id, summary_id, position, text, citations, verdict, reason)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
          [subjectId, row.id, s.position, s.text, JSON.stringify(s.citations), s.verdict, s.reason],
        );
      }
    });
  }

  /**
   * The version a new summary folds: the newest run of the aspect (and session, for a
   * per-session aspect) that stored a fact the owner has not rejected and nothing retracted.
   */
  previous(
    subjectId: string,
    aspect: string,
    sessionId: string | null,
  ): Promise<StoredSummary | null> {
    return guard('reading the previous summary', async () => {
      const { rows } = await this.db.query<DbSummary>(
        `SELECT ${COLUMNS} ${FROM}
         WHERE s.subject_id = $1 AND s.aspect = $2 AND ($3::text IS NULL OR s.session_id = $3)
           AND s.fact_id IS NOT NULL AND f.status NOT IN ('rejected', 'retracted')
         ORDER BY s.created_at DESC, s.id DESC LIMIT 1`,
        [subjectId, aspect, sessionId],
      );
      const r = rows[0];
      if (r === undefined) return null;
      return {
        ...toRow(r),
        sentenceRows: (await this.sentencesOf(subjectId, [r.id])).get(r.id) ?? [],
      };
    });
  }

  /** The newest runs, newest first, with their sentences. */
  list(
    subjectId: string,
    aspect: string | null,
    page: { limit: number; offset: number },
  ): Promise<StoredSummary[]> {
    return guard('listing summaries', async () => {
      const { rows } = await this.db.query<DbSummary>(
        `SELECT ${COLUMNS} ${FROM}
         WHERE s.subject_id = $1 AND ($2::text IS NULL OR s.aspect = $2)
         ORDER BY s.created_at DESC, s.id DESC LIMIT $3 OFFSET $4`,
        [subjectId, aspect, page.limit, page.offset],
      );
      // every listed summary's sentences in one read
      const sentences = await this.sentencesOf(
        subjectId,
        rows.map((r) => r.id),
      );
      return rows.map((r) => ({ ...toRow(r), sentenceRows: sentences.get(r.id) ?? [] }));
    });
  }

  /** The sentences of these summaries, each summary's in order. */
  private async sentencesOf(
    subjectId: string,
    summaryIds: readonly string[],
  ): Promise<Map<string, CheckedSentence[]>> {
    const out = new Map<string, CheckedSentence[]>();
    if (summaryIds.length === 0) return out;
    const { rows } = await this.db.query<{
      summary_id: string;
      position: number;
      text: string;
      citations: unknown;
      verdict: SentenceVerdict;
      reason: string;
    }>(
      `SELECT summary_id, position, text, citations, verdict, reason FROM summary_sentences
       WHERE subject_id = $1 AND summary_id = ANY($2::text[]) ORDER BY summary_id, position`,
      [subjectId, [...summaryIds]],
    );
    for (const r of rows) {
      const list = out.get(r.summary_id) ?? [];
      list.push({
        position: r.position,
        text: r.text,
        citations: citationsOf(r.citations) ?? ([] as Citation[]),
        verdict: r.verdict,
        reason: r.reason,
      });
      out.set(r.summary_id, list);
    }
    return out;
  }

  /** The subject's turns with these ids, as the summary check reads them. */
  turns(subjectId: string, ids: readonly string[]): Promise<Map<string, SummaryTurn>> {
    return guard('reading cited turns', async () => {
      if (ids.length === 0) return new Map();
      const { rows } = await this.db.query<{
        id: string;
        session_id: string;
        seq: number;
        role: SummaryTurn['role'];
        content: string;
        recorded_at: Date;
      }>(
        `SELECT id, session_id, seq, role, content, recorded_at FROM turns
         WHERE subject_id = $1 AND id = ANY($2::text[])`,
        [subjectId, [...ids]],
      );
      return new Map(
        rows.map((r) => [
          r.id,
          {
            id: r.id,
            sessionId: r.session_id,
            seq: r.seq,
            role: r.role,
            content: r.content,
            recordedAt: r.recorded_at,
          },
        ]),
      );
    });
  }
}
