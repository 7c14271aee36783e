import { EngineError } from '../domain/errors.js';
import type { FactStatus } from '../domain/fact.js';
import {
  MAX_VECTOR_DIMS,
  type PendingFact,
  type PendingTurn,
  type RecalledFactRow,
  type VectorMath,
} from '../domain/recall-index.js';
import { FACT_ROW_JSON, factRow } from './fact-row-json.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A vector as a literal: pgvector's `[a,b]` or an array's `{a,b}`. */
function literal(v: readonly number[], math: VectorMath): string {
  return math === 'pgvector' ? `[${v.join(',')}]` : `{${v.join(',')}}`;
}

/** pgvector indexes vectors of at most this many dimensions; longer ones are compared in full. */
export const HNSW_MAX_DIMS = 2000;

/**
 * Nearest-neighbour reads: the rows of the subject and model nearest the query vector `$4`,
 * best first, ties by key, at most `$5`. Turns: `$6` is a session, or null for all. Facts: `$6`
 * the statuses wanted, `$7` the evidence session or null. The distance `d` is 1 − cosine (both
 * vectors are unit length); callers keep the positive similarities (`d` < 1). Three ways:
 * - plain SQL: one minus the dot product, every vector compared (exact);
 * - pgvector through the index: `<=>` on the vectors cast to `vector(dims)`, with `dims` written
 *   into the text so the planner can use that length's HNSW index (approximate; an iterative
 *   scan keeps going until the filters let rows through, up to pgvector's scan cap). The index
 *   yields rows by distance alone, so a few more are read and ties broken in the list;
 * - pgvector in full: the same distance on the uncast `vector`, which no index serves (exact),
 *   for when the index scan came back short (a small subject in a large store, a narrow filter).
 */
const PLAIN_DISTANCE =
  '(1 - (SELECT sum(a::float8 * b::float8) FROM unnest(v.embedding, $4::real[]) AS x(a, b)))';
const EXACT_PGVECTOR_DISTANCE = '(v.embedding::vector <=> $4::vector)';
const indexDistance = (dims: number): string =>
  `(v.embedding::vector(${dims}) <=> $4::vector(${dims}))`;
/** Rows read past k through the index, so ties at the cut are broken by key. */
const TIE_MARGIN = 16;

const TURNS_LIST = `SELECT json_agg(json_build_array(session_id, seq, d)
                            ORDER BY d, session_id, seq)::text AS doc`;
const TURNS_FILTER = `FROM turn_vectors v
  WHERE v.subject_id = $1 AND v.model = $2 AND v.dims = $3
    AND ($6::text IS NULL OR v.session_id = $6)`;
const TURNS_ORDER = 'ORDER BY d, v.session_id, v.seq LIMIT $5';
const NEAREST_TURNS: Record<'plain' | 'exact', string> = {
  plain: `${TURNS_LIST} FROM (SELECT v.session_id, v.seq, ${PLAIN_DISTANCE} AS d
    ${TURNS_FILTER} ${TURNS_ORDER}) n`,
  exact: `${TURNS_LIST} FROM (SELECT v.session_id, v.seq, ${EXACT_PGVECTOR_DISTANCE} AS d
    ${TURNS_FILTER} ${TURNS_ORDER}) n`,
};

const FACTS_LIST = `SELECT json_agg(json_build_array(${FACT_ROW_JSON}, d) ORDER BY d, id)::text
                      AS doc`;
const FACTS_FILTER = `FROM fact_vectors v JOIN facts f ON f.subject_id = v.subject_id AND f.id = v.fact_id
  WHERE v.subject_id = $1 AND v.model = $2 AND v.dims = $3 AND f.status = ANY($6::text[])
    AND ($7::text IS NULL OR f.evidence_session_id = $7)`;
const FACTS_ORDER = 'ORDER BY d, f.id LIMIT $5';
const NEAREST_FACTS: Record<'plain' | 'exact', string> = {
  plain: `${FACTS_LIST} FROM (SELECT f.*, ${PLAIN_DISTANCE} AS d ${FACTS_FILTER} ${FACTS_ORDER}) n`,
  exact: `${FACTS_LIST} FROM (SELECT f.*, ${EXACT_PGVECTOR_DISTANCE} AS d
    ${FACTS_FILTER} ${FACTS_ORDER}) n`,
};

/** The nearest-turns read through the HNSW index of vectors of `dims` numbers. */
export function nearestTurnsByIndexSql(dims: number): string {
  return `${TURNS_LIST} FROM (SELECT v.session_id, v.seq, ${indexDistance(dims)} AS d
    ${TURNS_FILTER} AND v.dims = ${dims} ORDER BY d LIMIT $5 + ${TIE_MARGIN}) n`;
}

function nearestFactsByIndexSql(dims: number): string {
  return `${FACTS_LIST} FROM (SELECT f.*, ${indexDistance(dims)} AS d
    ${FACTS_FILTER} AND v.dims = ${dims} ORDER BY d LIMIT $5 + ${TIE_MARGIN}) n`;
}

/** A whole number of dimensions, safe to write into SQL text. */
function requireDims(dims: number): number {
  if (!Number.isInteger(dims) || dims < 1 || dims > MAX_VECTOR_DIMS) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `a vector holds 1 to ${MAX_VECTOR_DIMS} numbers, not ${String(dims)}`,
      { data: { field: 'dims' } },
    );
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

  /** Fresh planner statistics for the vector tables (where nothing else takes them). */
  analyze(): Promise<void> {
    return guard('analysing the vector tables', () =>
      this.db.exec('ANALYZE turn_vectors, fact_vectors'),
    );
  }

  /**
   * Lets a filtered HNSW scan keep going, in distance order, until k rows pass the filters
   * (pgvector 0.8), instead of stopping after its first candidates. Inside a transaction only.
   */
  iterativeScans(): Promise<void> {
    return guard('setting up the vector search', () =>
      this.db.exec("SET LOCAL hnsw.iterative_scan = 'strict_order'"),
    );
  }

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
   * Turns without a vector for this model (a forgotten turn has no text to embed), in key order,
   * after `after` when given (a caller walking through them passes the last one it got, so no
   * batch rescans the ones before).
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
         WHERE t.subject_id = $1 AND (t.session_id, t.seq) > ($4, $5) AND t.forget_id IS NULL AND (
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
   * since each vector belongs to exactly one turn or fact (primary and foreign keys), and a
   * forgotten turn's vector is deleted with its text.
   */
  hasPending(): Promise<boolean> {
    return guard('counting vectors', async () => {
      const { rows } = await this.db.query<{ pending: boolean }>(
        `SELECT (SELECT count(*) FROM turns WHERE subject_id = $1 AND forget_id IS NULL)
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
   * The turns nearest the query vector, best first, ties by session id and seq; only positive
   * similarities. Exact in plain SQL; through pgvector's index, approximate (see above).
   */
  nearestTurns(
    query: readonly number[],
    session: string | null,
    limit: number,
    math: VectorMath,
  ): Promise<{ session: string; seq: number; similarity: number }[]> {
    return guard('reading turn vectors', async () => {
      const params = [this.subjectId, this.model, query.length, literal(query, math), limit];
      const read = async (sql: string, prepare: boolean): Promise<[string, number, number][]> => {
        const { rows } = await this.db.query<{ doc: string | null }>(sql, [...params, session], {
          prepare,
        });
        return (JSON.parse(rows[0]?.doc ?? 'null') as [string, number, number][] | null) ?? [];
      };
      const list = await this.nearest(
        math,
        limit,
        query.length,
        read,
        NEAREST_TURNS,
        nearestTurnsByIndexSql,
      );
      return list
        .filter(([, , d]) => d < 1)
        .map(([s, seq, d]) => ({ session: s, seq, similarity: 1 - d }));
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
      const params = [this.subjectId, this.model, query.length, literal(query, math), limit];
      const read = async (sql: string, prepare: boolean): Promise<[unknown, number][]> => {
        const { rows } = await this.db.query<{ doc: string | null }>(
          sql,
          [...params, statuses, session],
          { prepare },
        );
        return (JSON.parse(rows[0]?.doc ?? 'null') as [unknown, number][] | null) ?? [];
      };
      const list = await this.nearest(
        math,
        limit,
        query.length,
        read,
        NEAREST_FACTS,
        nearestFactsByIndexSql,
      );
      return list
        .filter(([, d]) => d < 1)
        .map(([row, d]) => ({ row: factRow(row), similarity: 1 - d }));
    });
  }

  /**
   * Plain SQL, or pgvector through the index and in full when the index came back short. The
   * pgvector texts are not kept prepared: a generic plan would not know how small the subject
   * is, and the text changes with the length anyway.
   */
  private async nearest<R>(
    math: VectorMath,
    limit: number,
    dims: number,
    read: (sql: string, prepare: boolean) => Promise<R[]>,
    exact: Record<'plain' | 'exact', string>,
    byIndex: (dims: number) => string,
  ): Promise<R[]> {
    if (math === 'plain') return read(exact.plain, true);
    const viaIndex = await read(byIndex(requireDims(dims)), false);
    if (viaIndex.length >= limit) return viaIndex.slice(0, limit);
    return read(exact.exact, false);
  }
}
