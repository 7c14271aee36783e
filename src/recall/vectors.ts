import { EngineError } from '../domain/errors.js';
import { requireId } from '../domain/turn.js';
import type { SqlClient } from '../store/sql-client.js';
import { VectorSql } from '../store/vector-sql.js';
import type { Embedder } from './embedder.js';

export interface EmbedPendingOptions {
  subject?: string;
  /** At most this many turns and this many facts in one call (default 1,000; up to 100,000). */
  limit?: number;
  /** Texts per embedder call (default 64). */
  batchSize?: number;
}

export interface EmbedPendingResult {
  model: string;
  /** Vectors stored by this call. */
  turns: number;
  facts: number;
  /** Turns or facts still without a vector for this model (the limit stopped the call). */
  remaining: boolean;
}

const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 100_000;
const DEFAULT_BATCH = 64;

/** What is embedded for a turn: its words, after the speaker's name when there is one. */
export function turnText(speaker: string | null, content: string): string {
  return speaker === null ? content : `${speaker}: ${content}`;
}

/** pgvector's (and memledger's) longest vector. */
const MAX_DIMS = 16_000;
/** The smallest magnitude PostgreSQL's `real` takes; a smaller non-zero one is refused. */
const REAL_MIN = 1.2e-38;

/**
 * Scales a vector to unit length; a vector that is empty, zero, not finite or longer than
 * 16,000 numbers is refused. Components too small for a `real` become 0.
 */
export function unitVector(v: readonly number[], what: string): number[] {
  if (!Array.isArray(v)) {
    throw new EngineError('EMBEDDER_FAILED', `the vector for ${what} is not a list of numbers`);
  }
  if (v.length > MAX_DIMS) {
    throw new EngineError(
      'EMBEDDER_FAILED',
      `the vector for ${what} has ${v.length} numbers; at most ${MAX_DIMS} are stored`,
    );
  }
  let norm = 0;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new EngineError('EMBEDDER_FAILED', `the vector for ${what} holds a non-finite value`);
    }
    norm += x * x;
  }
  if (v.length === 0 || norm === 0) {
    throw new EngineError('EMBEDDER_FAILED', `the vector for ${what} is empty or zero`);
  }
  const scale = 1 / Math.sqrt(norm);
  return v.map((x) => (Math.abs(x * scale) < REAL_MIN ? 0 : x * scale));
}

/**
 * Calls the embedder: its answer must be one vector per text, in order. Any failure of a host's
 * embedder, thrown or answered, is `EMBEDDER_FAILED` (the original error as its cause).
 */
export async function callEmbedder(
  embedder: Embedder,
  texts: readonly string[],
): Promise<unknown[]> {
  let answer: unknown;
  try {
    answer = await embedder.embed(texts);
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError(
      'EMBEDDER_FAILED',
      `${embedder.model} failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (!Array.isArray(answer) || answer.length !== texts.length) {
    throw new EngineError(
      'EMBEDDER_FAILED',
      `asked ${embedder.model} for ${texts.length} vectors, got ` +
        `${Array.isArray(answer) ? answer.length : 'something else'}`,
    );
  }
  return answer;
}

/** An embedder's model name, checked once when the engine gets it. */
export function requireEmbedderModel(embedder: Embedder): string {
  const model = (embedder as { model?: unknown }).model;
  if (typeof model !== 'string' || model.trim() === '') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'an embedder needs a model name (a non-empty string)',
    );
  }
  return model;
}

/** Refuses a vector whose length differs from the ones already stored for the model. */
export function checkDims(
  model: string,
  dims: number,
  stored: readonly number[],
  what = 'the query',
): void {
  const other = stored.find((d) => d !== dims);
  if (other !== undefined) {
    throw new EngineError(
      'EMBEDDER_FAILED',
      `model "${model}" gave a ${dims}-dimension vector for ${what}, but the store holds ` +
        `${other}-dimension vectors under that name; give a changed model a new name`,
    );
  }
}

/**
 * Embeds the subject's turns and facts that have no vector for the embedder's model yet, and
 * stores the vectors. Reads and embedding happen outside any transaction; each batch is stored
 * in one statement, so a failure keeps what was stored and a rerun carries on.
 */
export async function embedPending(
  deps: { client: SqlClient; embedder: Embedder; defaultSubject: string },
  options: EmbedPendingOptions = {},
): Promise<EmbedPendingResult> {
  const subject = requireId(options.subject ?? deps.defaultSubject, 'subject');
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
  if (!(await sql.subjectExists())) {
    throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subject}" does not exist`);
  }
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
