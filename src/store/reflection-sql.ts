import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** One reflection run as stored. */
export interface ReflectionRow {
  id: string;
  sessionId: string;
  promptVersion: string;
  provider: string;
  model: string;
  fromSeq: number;
  toSeq: number;
  proposed: number;
  dropped: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
  createdAt: Date;
}

/** One proposal of a run as the gate left it: its slot, and a fact's status or a drop's code. */
export interface ReflectionItemRow {
  reflectionId: string;
  promptVersion: string;
  model: string;
  position: number;
  slot: string;
  factId: string | null;
  status: string | null;
  attested: boolean | null;
  code: string | null;
}

interface DbRun {
  id: string;
  session_id: string;
  prompt_version: string;
  provider: string;
  model: string;
  from_seq: number;
  to_seq: number;
  proposed: number;
  dropped: number;
  input_tokens: string | number;
  output_tokens: string | number;
  duration_ms: number;
  created_at: Date;
}

const RUN_COLUMNS = `id, session_id, prompt_version, provider, model, from_seq, to_seq, proposed,
  dropped, input_tokens, output_tokens, duration_ms, created_at`;

function toRun(r: DbRun): ReflectionRow {
  return {
    id: r.id,
    sessionId: r.session_id,
    promptVersion: r.prompt_version,
    provider: r.provider,
    model: r.model,
    fromSeq: r.from_seq,
    toSeq: r.to_seq,
    proposed: r.proposed,
    dropped: r.dropped,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    durationMs: r.duration_ms,
    createdAt: r.created_at,
  };
}

/** Reflection runs and what the gate made of each of their proposals. */
export class ReflectionSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Stores a run and its items (in the gate's transaction: with the batch, or not at all). */
  insert(
    subjectId: string,
    run: ReflectionRow,
    /** What the gate made of each proposal, in the model's order: a fact or a drop. */
    outcomes: ReadonlyArray<{ factId: string } | { droppedId: string }>,
  ): Promise<void> {
    return guard('recording a reflection', async () => {
      await this.db.query(
        `INSERT INTO reflections (subject_id, id, session_id, prompt_version, provider, model,
           from_seq, to_seq, proposed, dropped, input_tokens, output_tokens, duration_ms, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          subjectId,
          run.id,
          run.sessionId,
          run.promptVersion,
          run.provider,
          run.model,
          run.fromSeq,
          run.toSeq,
          run.proposed,
          run.dropped,
          run.inputTokens,
          run.outputTokens,
          run.durationMs,
          run.createdAt,
        ],
      );
      if (outcomes.length === 0) return;
      await this.db.query(
        `INSERT INTO reflection_items (subject_id, reflection_id, position, fact_id, dropped_id)
         SELECT $1, $2, o.position::int, o.fact_id, o.dropped_id
         FROM unnest($3::int[], $4::text[], $5::text[]) AS o (position, fact_id, dropped_id)`,
        [
          subjectId,
          run.id,
          outcomes.map((_, i) => i + 1),
          outcomes.map((o) => ('factId' in o ? o.factId : null)),
          outcomes.map((o) => ('droppedId' in o ? o.droppedId : null)),
        ],
      );
    });
  }

  /** Runs, newest first, optionally of one session. */
  list(
    subjectId: string,
    sessionId: string | null,
    page: { limit: number; offset: number },
  ): Promise<ReflectionRow[]> {
    return guard('reading reflections', async () => {
      const { rows } = await this.db.query<DbRun>(
        `SELECT ${RUN_COLUMNS} FROM reflections
         WHERE subject_id = $1 AND ($2::text IS NULL OR session_id = $2)
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
        [subjectId, sessionId, page.limit, page.offset],
      );
      return rows.map(toRun);
    });
  }

  /** Every item of the subject's runs (optionally of one prompt version), by run and position. */
  items(subjectId: string, promptVersion: string | null): Promise<ReflectionItemRow[]> {
    return guard('reading reflection outcomes', async () => {
      const { rows } = await this.db.query<{
        reflection_id: string;
        prompt_version: string;
        model: string;
        position: number;
        slot: string;
        fact_id: string | null;
        status: string | null;
        attested: boolean | null;
        code: string | null;
      }>(
        `SELECT i.reflection_id, r.prompt_version, r.model, i.position,
                COALESCE(f.slot, d.slot) AS slot, i.fact_id, f.status, f.attested, d.code
         FROM reflection_items i
         JOIN reflections r ON r.subject_id = $1 AND r.id = i.reflection_id
         LEFT JOIN facts f ON f.subject_id = $1 AND f.id = i.fact_id
         LEFT JOIN dropped_proposals d ON d.subject_id = $1 AND d.id = i.dropped_id
         WHERE i.subject_id = $1 AND ($2::text IS NULL OR r.prompt_version = $2)
         ORDER BY r.created_at, i.reflection_id, i.position`,
        [subjectId, promptVersion],
      );
      return rows.map((r) => ({
        reflectionId: r.reflection_id,
        promptVersion: r.prompt_version,
        model: r.model,
        position: r.position,
        slot: r.slot,
        factId: r.fact_id,
        status: r.status,
        attested: r.attested,
        code: r.code,
      }));
    });
  }
}
