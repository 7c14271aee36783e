import { EngineError } from '../domain/errors.js';
import { MAX_VECTOR_DIMS } from '../domain/recall-index.js';
import type { Embedder } from './embedder.js';

/** What is embedded for a turn: its words, after the speaker's name when there is one. */
export function turnText(speaker: string | null, content: string): string {
  return speaker === null ? content : `${speaker}: ${content}`;
}

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
  if (v.length > MAX_VECTOR_DIMS) {
    throw new EngineError(
      'EMBEDDER_FAILED',
      `the vector for ${what} has ${v.length} numbers; at most ${MAX_VECTOR_DIMS} are stored`,
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
