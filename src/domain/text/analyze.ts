import { stemmer } from 'stemmer';

/**
 * English analysis for recall: lowercase, curly apostrophes folded, tokens of letters and digits
 * (an inner apostrophe kept, so "don't" stays one token), stopwords dropped, a possessive "'s"
 * cut, then the Porter stemmer. Pure and deterministic: the same text gives the same terms on
 * every engine, because the analysis runs here and the store only keeps its output.
 */
const TOKEN = /[a-z0-9]+(?:'[a-z]+)*/g;

/**
 * The version of `analyze`'s output, recorded with the recall index (migration 0008). Bump it
 * whenever `analyze` could return other terms for some text (the token pattern, the stopwords,
 * the stemmer or its version): a store indexed by another version is refused on open with
 * REINDEX_REQUIRED until `memledger reindex` rebuilds its postings.
 */
export const ANALYZER_VERSION = '1';

/** The usual English stopword list (Snowball's, with the contracted forms written out). */
export const STOPWORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
  yourselves he him his himself she she's her hers herself it it's its itself they them their
  theirs themselves what which who whom this that that'll these those am is are was were be been
  being have has had having do does did doing a an the and but if or because as until while of
  at by for with about against between into through during before after above below to from up
  down in out on off over under again further then once here there when where why how all any
  both each few more most other some such no nor not only own same so than too very s t can will
  just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
  didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
  mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
  wouldn't`.split(/\s+/),
);

const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 50_000;

function stem(token: string): string {
  const hit = stemCache.get(token);
  if (hit !== undefined) return hit;
  const bare = token.endsWith("'s") ? token.slice(0, -2) : token;
  const out = stemmer(bare);
  if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
  stemCache.set(token, out);
  return out;
}

/** The analysed terms of a text, in order, with repeats (term frequency is their count). */
export function analyze(text: string): string[] {
  const lowered = text.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
  const out: string[] = [];
  for (const match of lowered.matchAll(TOKEN)) {
    const token = match[0];
    if (STOPWORDS.has(token)) continue;
    const term = stem(token);
    if (term.length > 0) out.push(term);
  }
  return out;
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
