import { EngineError } from '../domain/errors.js';
import type { SqlClient } from '../store/sql-client.js';
import { VectorSql } from '../store/vector-sql.js';
import type { Embedder } from './embedder.js';
import type { EmbedPendingOptions, EmbedPendingResult } from './recall-types.js';
import { callEmbedder, checkDims, turnText, unitVector } from './vectors.js';

const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 100_000;
const DEFAULT_BATCH = 64;

/**
 * Embeds one subject's turns and facts that have no vector for the embedder's model yet, and
 * stores the vectors. Reads and embedding happen outside any transaction; each batch is stored
 * in one statement, so a failure keeps what was stored and a rerun carries on.
 */
export async function embedPending(
  deps: { client: SqlClient; embedder: Embedder },
  subject: string,
  options: EmbedPendingOptions = {},
): Promise<EmbedPendingResult> {
  const limit = options.limit ?? DEFAULT_LIMIT;
  const batch = options.batchSize ?? DEFAULT_BATCH;
  for (const [name, value, max] of [
    ['limit', limit, MAX_LIMIT],
    ['batchSize', batch, 2048],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new EngineError('INVALID_ARGUMENT', `${name} must be a whole number from 1 to ${max}`);
    }
  }
  const sql = new VectorSql(deps.client, subject, deps.embedder.model);
  const model = deps.embedder.model;
  const stored = await sql.storedDims();
  let indexed = false;
  const embed = async (texts: string[], what: (i: number) => string): Promise<number[][]> => {
    const out = (await callEmbedder(deps.embedder, texts)).map((v, i) =>
      unitVector(v as number[], what(i)),
    );
    const dims = out[0]?.length;
    if (dims === undefined) return out;
    // the first vectors of a model set its length, for the rest of this batch too
    if (stored.length === 0) stored.push(dims);
    out.forEach((v, i) => checkDims(model, v.length, stored, what(i)));
    if (!indexed && deps.client.capabilities.vectorType) {
      // before the first vectors go in: an index grows with its table far faster than it builds
      await sql.ensureIndexes(dims);
      indexed = true;
    }
    return out;
  };
  /**
   * Embeds and stores one batch. When the batch fails, its texts go one at a time: those that
   * embed are stored, and the error names the first that does not (the batch error alone would
   * not say which, and that text would fail every rerun the same way).
   */
  const embedAndStore = async <T>(
    items: readonly T[],
    text: (item: T) => string,
    what: (item: T) => string,
    store: (items: readonly T[], vectors: number[][]) => Promise<number>,
  ): Promise<number> => {
    try {
      const vectors = await embed(items.map(text), (i) => what(items[i] as T));
      return await store(items, vectors);
    } catch (err) {
      if (items.length === 1 || !(err instanceof EngineError) || err.code !== 'EMBEDDER_FAILED') {
        throw err;
      }
    }
    let n = 0;
    for (const item of items) {
      let vectors: number[][];
      try {
        vectors = await embed([text(item)], () => what(item));
      } catch (err) {
        if (!(err instanceof EngineError)) throw err;
        throw new EngineError(
          err.code,
          `${what(item)} could not be embedded (${n} stored before it): ${err.message}`,
          { cause: err },
        );
      }
      n += await store([item], vectors);
    }
    return n;
  };

  // counts what this call stored; another process embedding at once may store some first
  let turns = 0;
  let afterTurn: { session: string; seq: number } | undefined;
  for (let done = 0; done < limit;) {
    const pending = await sql.pendingTurns(Math.min(batch, limit - done), afterTurn);
    if (pending.length === 0) break;
    afterTurn = pending[pending.length - 1];
    turns += await embedAndStore(
      pending,
      (t) => turnText(t.speaker, t.content),
      (t) => `turn ${t.session}#${t.seq}`,
      (items, vectors) =>
        sql.addTurnVectors(items.map((t, i) => ({ ...t, vector: vectors[i] ?? [] }))),
    );
    done += pending.length;
  }
  let facts = 0;
  let afterFact: string | undefined;
  for (let done = 0; done < limit;) {
    const pending = await sql.pendingFacts(Math.min(batch, limit - done), afterFact);
    if (pending.length === 0) break;
    afterFact = pending[pending.length - 1]?.id;
    facts += await embedAndStore(
      pending,
      (f) => f.text,
      (f) => `fact ${f.id}`,
      (items, vectors) =>
        sql.addFactVectors(items.map((f, i) => ({ id: f.id, vector: vectors[i] ?? [] }))),
    );
    done += pending.length;
  }
  if (turns + facts > 0 && !deps.client.capabilities.autovacuum) {
    // no autovacuum (PGlite): without fresh statistics the planner takes a large vector table
    // for a small one and compares every vector instead of using the HNSW index
    await sql.analyze();
  }
  // counted afresh: a turn or fact written meanwhile may sort before where the walk ended
  return { model, turns, facts, remaining: await sql.hasPending() };
}
