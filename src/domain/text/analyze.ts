import { contentWords } from './words.js';

/**
 * English analysis for recall: a text's content words with repeats (`contentWords`, the same
 * words the gate and attestation read), so term frequency is their count. Pure and deterministic:
 * the same text gives the same terms on every engine, because the analysis runs here and the
 * store only keeps its output.
 */

/**
 * The version of `analyze`'s output, recorded with the recall index (migration 0008). Bump it
 * whenever `analyze` could return other terms for some text (the tokenizer, the stopwords, the
 * lemmas, the stemmer or its version): a store indexed by another version is refused on open
 * with REINDEX_REQUIRED until `memledger reindex` rebuilds its postings.
 */
export const ANALYZER_VERSION = '3';

/** The analysed terms of a text, in order, with repeats (term frequency is their count). */
export function analyze(text: string): string[] {
  return contentWords(text);
}

/** A turn's indexed terms: its speaker's (when named), then its content's. */
export function turnTerms(speaker: string | null, content: string): string[] {
  return [...(speaker === null ? [] : analyze(speaker)), ...analyze(content)];
}

/** Term frequencies of a text: each distinct term with its count, sorted by term. */
export function termFrequencies(terms: readonly string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  return new Map([...tf.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
