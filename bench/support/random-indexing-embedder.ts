/**
 * A stand-in embedder that runs in this process (no embedding model can be downloaded here):
 * the sum of a fixed pseudo-random unit vector per analysed term, so texts that share words are
 * near one another and a nearest-neighbour search has real structure to work through.
 */
import { performance } from 'node:perf_hooks';
import type { Embedder } from '../../src/index.js';
import { analyze } from '../../src/rules.js';

/** The stand-in's model name, as vectors are stored under it. */
export const RANDOM_INDEXING_MODEL = 'bench-random-indexing';

/** A deterministic pseudo-random unit vector per term (xorshift seeded by the term's hash). */
function termVector(term: string, dims: number): Float64Array {
  let h = 2166136261;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 16777619);
  let x = h >>> 0 || 1;
  const v = new Float64Array(dims);
  for (let i = 0; i < dims; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[i] = ((x >>> 0) / 4294967296) * 2 - 1;
  }
  return v;
}

/** The stand-in embedder: random indexing over the engine's own analysis. */
export function randomIndexingEmbedder(dims: number): Embedder & { ms: number } {
  const cache = new Map<string, Float64Array>();
  const state = {
    model: RANDOM_INDEXING_MODEL,
    ms: 0,
    async embed(texts: readonly string[]): Promise<number[][]> {
      const start = performance.now();
      const out = texts.map((text) => {
        const sum = new Float64Array(dims);
        for (const term of analyze(text)) {
          let tv = cache.get(term);
          if (tv === undefined) cache.set(term, (tv = termVector(term, dims)));
          for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + (tv[i] as number);
        }
        // a text of stopwords only still gets a direction
        if (sum.every((x) => x === 0)) sum[0] = 1;
        return Array.from(sum);
      });
      state.ms += performance.now() - start;
      return Promise.resolve(out);
    },
  };
  return state;
}
