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

/** Scales a vector to unit length; a vector that is empty, zero or not finite is refused. */
export function unitVector(v: readonly number[], what: string): number[] {
  if (!Array.isArray(v)) {
    throw new EngineError('EMBEDDER_FAILED', `the vector for ${what} is not a list of numbers`);
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
  return v.map((x) => x * scale);
}

/** Refuses a vector whose length differs from the ones already stored for the model. */
export function checkDims(model: string, dims: number, stored: readonly number[]): void {
  const other = stored.find((d) => d !== dims);
  if (other !== undefined) {
    throw new EngineError(
      'EMBEDDER_FAILED',
      `model "${model}" gave a ${dims}-dimension vector, but the store holds ${other}-dimension ` +
        'vectors under that name; give a changed model a new name',
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
  const { rows } = await deps.client.query<{ present: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM subjects WHERE id = $1) AS present',
    [subject],
  );
  if (rows[0]?.present !== true) {
    throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subject}" does not exist`);
  }
  const model = deps.embedder.model;
  const sql = new VectorSql(deps.client, subject, model);
  const stored = await sql.storedDims();
  let indexed = false;
  const embed = async (texts: string[], what: (i: number) => string): Promise<number[][]> => {
    const vectors = await deps.embedder.embed(texts);
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new EngineError(
        'EMBEDDER_FAILED',
        `asked ${model} for ${texts.length} vectors, got ${Array.isArray(vectors) ? vectors.length : 'none'}`,
      );
    }
    const out = vectors.map((v, i) => unitVector(v, what(i)));
    for (const v of out) checkDims(model, v.length, stored);
    const dims = out[0]?.length;
    if (dims !== undefined && !indexed && deps.client.capabilities.vectorType) {
      // before the first vectors go in: an index grows with its table far faster than it builds
      await sql.ensureIndexes(dims);
      indexed = true;
    }
    if (stored.length === 0 && dims !== undefined) stored.push(dims);
    return out;
  };

  // counts what this call stored; another process embedding at once may store some first
  let turns = 0;
  let afterTurn: { session: string; seq: number } | undefined;
  for (let done = 0; done < limit;) {
    const pending = await sql.pendingTurns(Math.min(batch, limit - done), afterTurn);
    if (pending.length === 0) break;
    afterTurn = pending[pending.length - 1];
    const vectors = await embed(
      pending.map((t) => turnText(t.speaker, t.content)),
      (i) => `turn ${pending[i]?.session ?? ''}#${pending[i]?.seq ?? ''}`,
    );
    turns += await sql.addTurnVectors(pending.map((t, i) => ({ ...t, vector: vectors[i] ?? [] })));
    done += pending.length;
  }
  let facts = 0;
  let afterFact: string | undefined;
  for (let done = 0; done < limit;) {
    const pending = await sql.pendingFacts(Math.min(batch, limit - done), afterFact);
    if (pending.length === 0) break;
    afterFact = pending[pending.length - 1]?.id;
    const vectors = await embed(
      pending.map((f) => f.text),
      (i) => `fact ${pending[i]?.id ?? ''}`,
    );
    facts += await sql.addFactVectors(
      pending.map((f, i) => ({ id: f.id, vector: vectors[i] ?? [] })),
    );
    done += pending.length;
  }
  if (turns + facts > 0 && !deps.client.capabilities.autovacuum) {
    // no autovacuum (PGlite): without fresh statistics the planner takes a large vector table
    // for a small one and compares every vector instead of using the HNSW index
    await deps.client.exec('ANALYZE turn_vectors, fact_vectors');
  }
  // counted afresh: a turn or fact written meanwhile may sort before where the walk ended
  return { model, turns, facts, remaining: await sql.hasPending() };
}
