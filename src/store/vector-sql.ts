import type { FactStatus } from '../domain/fact.js';
import { FACT_ROW_JSON, factRow, type RecalledFactRow } from './recall-sql.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A turn that has no vector yet for some model, with the text to embed. */
export interface PendingTurn {
  session: string;
  seq: number;
  speaker: string | null;
  content: string;
}

/** A fact that has no vector yet for some model. */
export interface PendingFact {
  id: string;
  text: string;
}

/** How vector distances are computed: by pgvector in C, or by plain SQL over `real[]`. */
export type VectorMath = 'pgvector' | 'plain';

/** A vector as a literal: pgvector's `[a,b]` or an array's `{a,b}`. */
function literal(v: readonly number[], math: VectorMath): string {
  return math === 'pgvector' ? `[${v.join(',')}]` : `{${v.join(',')}}`;
}

/** pgvector indexes vectors of at most this many dimensions; longer ones are compared in full. */
export const HNSW_MAX_DIMS = 2000;

/**
 * Nearest-neighbour reads. Only positive similarities (distance below 1) come back, best first,
 * ties by key. Turns: `$6` is a session, or null for all. Facts: `$6` the statuses wanted, `$7`
 * the evidence session or null. The distance is 1 − cosine of the row's `embedding` and the
 * query vector `$4` (both unit length):
 * - plain SQL: one minus the dot product, every vector of the subject and model compared;
 * - pgvector: `<=>` on the vectors cast to `vector(dims)`, with `dims` written into the text,
 *   so the planner can use that length's HNSW index (approximate, iterative: it keeps scanning
 *   until the filters let k rows through) or, for a small subject, compare them all.
 */
const PLAIN_DISTANCE =
  '(1 - (SELECT sum(a::float8 * b::float8) FROM unnest(v.embedding, $4::real[]) AS x(a, b)))';
const pgvectorDistance = (dims: number): string =>
  `(v.embedding::vector(${dims}) <=> $4::vector(${dims}))`;

const TURNS_LIST = `SELECT json_agg(json_build_array(session_id, seq, 1 - d)
                            ORDER BY d, session_id, seq)::text AS doc`;
const TURNS_FILTER = `FROM turn_vectors v
  WHERE v.subject_id = $1 AND v.model = $2 AND v.dims = $3
    AND ($6::text IS NULL OR v.session_id = $6)`;
const TURNS_ORDER = 'ORDER BY d, v.session_id, v.seq LIMIT $5';
const NEAREST_TURNS_PLAIN = `${TURNS_LIST} FROM (SELECT v.session_id, v.seq,
  ${PLAIN_DISTANCE} AS d ${TURNS_FILTER} ${TURNS_ORDER}) n WHERE d < 1`;

const FACTS_LIST = `SELECT json_agg(json_build_array(${FACT_ROW_JSON}, 1 - d) ORDER BY d, id)::text
                      AS doc`;
const FACTS_FILTER = `FROM fact_vectors v JOIN facts f ON f.id = v.fact_id
  WHERE v.subject_id = $1 AND v.model = $2 AND v.dims = $3 AND f.status = ANY($6::text[])
    AND ($7::text IS NULL OR f.evidence_session_id = $7)`;
const FACTS_ORDER = 'ORDER BY d, f.id LIMIT $5';
const NEAREST_FACTS_PLAIN = `${FACTS_LIST} FROM (SELECT f.*, ${PLAIN_DISTANCE} AS d
  ${FACTS_FILTER} ${FACTS_ORDER}) n WHERE d < 1`;

/** An index scan yields rows by distance alone: ties are broken outside it, in the list. */
const INDEX_ORDER = 'ORDER BY d LIMIT $5';

export function nearestTurnsSql(math: VectorMath, dims: number): string {
  if (math === 'plain') return NEAREST_TURNS_PLAIN;
  return `${TURNS_LIST} FROM (SELECT v.session_id, v.seq, ${pgvectorDistance(dims)} AS d
    ${TURNS_FILTER} AND v.dims = ${dims} ${INDEX_ORDER}) n WHERE d < 1`;
}

function nearestFactsSql(math: VectorMath, dims: number): string {
  if (math === 'plain') return NEAREST_FACTS_PLAIN;
  return `${FACTS_LIST} FROM (SELECT f.*, ${pgvectorDistance(dims)} AS d
    ${FACTS_FILTER} AND v.dims = ${dims} ${INDEX_ORDER}) n WHERE d < 1`;
}

/** A whole number of dimensions, safe to write into SQL text. */
function requireDims(dims: number): number {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16000) {
    throw new Error(`not a vector length: ${dims}`);
  }
  return dims;
}

/** Reads and writes of the turn and fact vectors of one subject for one model. */
export class VectorSql {
  constructor(
    private readonly db: SqlExecutor,
    private readonly subjectId: string,
    private readonly model: string,
  ) {}

  /** The lengths of the vectors stored for this model (one, unless something went wrong). */
  storedDims(): Promise<number[]> {
    return guard('reading stored vectors', async () => {
      const { rows } = await this.db.query<{ dims: number }>(
        `(SELECT dims FROM turn_vectors WHERE subject_id = $1 AND model = $2 LIMIT 1)
         UNION
         (SELECT dims FROM fact_vectors WHERE subject_id = $1 AND model = $2 LIMIT 1)`,
        [this.subjectId, this.model],
      );
      return rows.map((r) => Number(r.dims)).sort((a, b) => a - b);
    });
  }

  /**
   * pgvector's HNSW indexes (cosine) for vectors of this length, one per table, made once: a
   * length is chosen by the model the host uses, so no migration can know it. Concurrent makers
   * race in the catalog; the loser's unique violation means the index is there.
   */
  async ensureIndexes(dims: number): Promise<void> {
    const n = requireDims(dims);
    if (n > HNSW_MAX_DIMS) return;
    for (const table of ['turn_vectors', 'fact_vectors'] as const) {
      await guard('indexing vectors', () =>
        this.db
          .exec(
            `CREATE INDEX IF NOT EXISTS ${table}_hnsw_${n} ON ${table}
             USING hnsw ((embedding::vector(${n})) vector_cosine_ops) WHERE dims = ${n}`,
          )
          .catch((err: unknown) => {
            if ((err as { code?: string }).code !== '23505') throw err;
          }),
      );
    }
  }

  /**
   * Turns without a vector for this model, in key order, after `after` when given (a caller
   * walking through them passes the last one it got, so no batch rescans the ones before).
   * "Has no vector" is a scalar sub-select, one primary-key probe per turn, not NOT EXISTS:
   * the planner turns NOT EXISTS into an anti-join, and with statistics taken before a burst of
   * vectors it chose a nested loop over all of them per turn (minutes on 100,000 turns).
   */
  pendingTurns(limit: number, after?: { session: string; seq: number }): Promise<PendingTurn[]> {
    return guard('reading turns to embed', async () => {
      const { rows } = await this.db.query<{
        session_id: string;
        seq: number;
        speaker: string | null;
        content: string;
      }>(
        `SELECT t.session_id, t.seq, t.speaker, t.content FROM turns t
         WHERE t.subject_id = $1 AND (t.session_id, t.seq) > ($4, $5) AND (
           SELECT 1 FROM turn_vectors v WHERE v.subject_id = t.subject_id AND v.model = $2
             AND v.session_id = t.session_id AND v.seq = t.seq) IS NULL
         ORDER BY t.session_id, t.seq LIMIT $3`,
        [this.subjectId, this.model, limit, after?.session ?? '', after?.seq ?? 0],
      );
      return rows.map((r) => ({
        session: r.session_id,
        seq: r.seq,
        speaker: r.speaker,
        content: r.content,
      }));
    });
  }

  /** Facts (of any status) without a vector for this model, by id, after `after` when given. */
  pendingFacts(limit: number, after?: string): Promise<PendingFact[]> {
    return guard('reading facts to embed', async () => {
      const { rows } = await this.db.query<{ id: string; text: string }>(
        `SELECT f.id, f.text FROM facts f
         WHERE f.subject_id = $1 AND f.id > $4 AND (
           SELECT 1 FROM fact_vectors v WHERE v.subject_id = f.subject_id AND v.model = $2
             AND v.fact_id = f.id) IS NULL
         ORDER BY f.id LIMIT $3`,
        [this.subjectId, this.model, limit, after ?? ''],
      );
      return rows;
    });
  }

  /**
   * Whether any turn or fact of the subject still has no vector for this model: counts compare,
   * since each vector belongs to exactly one turn or fact (primary and foreign keys).
   */
  hasPending(): Promise<boolean> {
    return guard('counting vectors', async () => {
      const { rows } = await this.db.query<{ pending: boolean }>(
        `SELECT (SELECT count(*) FROM turns WHERE subject_id = $1)
                  > (SELECT count(*) FROM turn_vectors WHERE subject_id = $1 AND model = $2)
             OR (SELECT count(*) FROM facts WHERE subject_id = $1)
                  > (SELECT count(*) FROM fact_vectors WHERE subject_id = $1 AND model = $2)
                AS pending`,
        [this.subjectId, this.model],
      );
      return rows[0]?.pending === true;
    });
  }

  /** Stores turn vectors; one another process stored first is kept (same model, same text). */
  async addTurnVectors(
    items: readonly { session: string; seq: number; vector: readonly number[] }[],
  ): Promise<number> {
    if (items.length === 0) return 0;
    return guard('storing turn vectors', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `WITH ins AS (
           INSERT INTO turn_vectors (subject_id, session_id, seq, model, dims, embedding)
           SELECT $1, s, q, $2, cardinality(e::real[]), e::real[]
           FROM unnest($3::text[], $4::int[], $5::text[]) AS x(s, q, e)
           ON CONFLICT DO NOTHING RETURNING 1)
         SELECT count(*)::int AS n FROM ins`,
        [
          this.subjectId,
          this.model,
          items.map((i) => i.session),
          items.map((i) => i.seq),
          items.map((i) => literal(i.vector, 'plain')),
        ],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /** Stores fact vectors; one another process stored first is kept. */
  async addFactVectors(
    items: readonly { id: string; vector: readonly number[] }[],
  ): Promise<number> {
    if (items.length === 0) return 0;
    return guard('storing fact vectors', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `WITH ins AS (
           INSERT INTO fact_vectors (subject_id, fact_id, model, dims, embedding)
           SELECT $1, id, $2, cardinality(e::real[]), e::real[]
           FROM unnest($3::text[], $4::text[]) AS x(id, e)
           ON CONFLICT DO NOTHING RETURNING 1)
         SELECT count(*)::int AS n FROM ins`,
        [
          this.subjectId,
          this.model,
          items.map((i) => i.id),
          items.map((i) => literal(i.vector, 'plain')),
        ],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /**
   * The turns nearest the query vector (exact search: every vector of the subject and model is
   * compared), best first; ties by session id and seq. Only positive similarities.
   */
  nearestTurns(
    query: readonly number[],
    session: string | null,
    limit: number,
    math: VectorMath,
  ): Promise<{ session: string; seq: number; similarity: number }[]> {
    return guard('reading turn vectors', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        nearestTurnsSql(math, requireDims(query.length)),
        [this.subjectId, this.model, query.length, literal(query, math), limit, session],
        { prepare: true },
      );
      const list = JSON.parse(rows[0]?.doc ?? 'null') as [string, number, number][] | null;
      return (list ?? []).map(([s, seq, similarity]) => ({ session: s, seq, similarity }));
    });
  }

  /** The facts nearest the query vector, in the given statuses, best first; ties by id. */
  nearestFacts(
    query: readonly number[],
    statuses: readonly FactStatus[],
    session: string | null,
    limit: number,
    math: VectorMath,
  ): Promise<{ row: RecalledFactRow; similarity: number }[]> {
    return guard('reading fact vectors', async () => {
      const { rows } = await this.db.query<{ doc: string | null }>(
        nearestFactsSql(math, requireDims(query.length)),
        [this.subjectId, this.model, query.length, literal(query, math), limit, statuses, session],
        { prepare: true },
      );
      const list = JSON.parse(rows[0]?.doc ?? 'null') as [unknown, number][] | null;
      return (list ?? []).map(([row, similarity]) => ({ row: factRow(row), similarity }));
    });
  }
}
