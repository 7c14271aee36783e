/**
 * Text comparison for the write gate: the quote check, attestation (seed 000 `isAttestedBy`) and
 * the similarity used to recognise a retracted claim. Pure and deterministic.
 */

import { collapseWhitespace } from './shown-text.js';

/**
 * Typographic characters that copy-paste, keyboards and models swap freely. Mapped both before
 * and after NFKC, because NFKC turns some of them into others (″ becomes ′′, ‑ becomes ‐).
 */
const PUNCTUATION_MAP: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u2018\u2019\u201A\u201B\u2032\u2039\u203A\u0060\u00B4\uFF07]/gu, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB\u301D\u301E\u301F\uFF02]/gu, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\uFE58\uFE63\uFF0D]/gu, '-'],
  [/\u2026/gu, '...'],
];

/** Invisible characters that split a word without showing: soft hyphen, zero-width, BOM. */
const INVISIBLE = /\u00AD|\u200B|\u200C|\u200D|\u2060|\uFEFF/gu;

const PLAIN_ASCII = /^[\t\n\r\u0020-\u005F\u0061-\u007E]*$/u;

function mapPunctuation(s: string): string {
  let out = s;
  for (const [pattern, replacement] of PUNCTUATION_MAP) out = out.replace(pattern, replacement);
  return out;
}

/**
 * The normalization under which a quote is looked for in a turn, applied to both sides:
 *
 * 1. Typographic single quotes, apostrophes and primes (‘ ’ ‚ ‛ ′ ‹ › ` ´) become `'`;
 *    typographic double quotes and double primes (“ ” „ ‟ ″ « » 〝 〞) become `"`.
 * 2. Hyphens, dashes and the minus sign (‐ ‑ ‒ – — ― ⁃ −) become `-`; the ellipsis … becomes `...`.
 * 3. Unicode NFKC (full-width letters, ligatures and compatibility forms fold to their plain
 *    form); rules 1-2 are applied again afterwards.
 * 4. Lowercase.
 * 5. Soft hyphens and zero-width characters are removed; every run of whitespace (including
 *    line breaks and non-breaking spaces) becomes one space; leading and trailing space is trimmed.
 *
 * Nothing else changes: words, their order and all other punctuation must match.
 */
export function normalizeForQuote(s: string): string {
  return memo(NORMALIZED, s, () => {
    // Plain ASCII without a backtick is already folded: skip the mapping and NFKC passes.
    const folded = PLAIN_ASCII.test(s) ? s : mapPunctuation(mapPunctuation(s).normalize('NFKC'));
    return collapseWhitespace(folded.toLowerCase().replace(INVISIBLE, '')).trim();
  });
}

/**
 * A batch of proposals cites the same few turns again and again: both functions below are pure,
 * so their results are remembered for the most recent inputs (bounded, cleared when full).
 */
const MEMO_LIMIT = 2048;
const NORMALIZED = new Map<string, string>();
const TOKENS = new Map<string, readonly string[]>();

/** Forgets every remembered result (benchmarks start each round cold with it). */
export function resetTextMemo(): void {
  NORMALIZED.clear();
  TOKENS.clear();
  WORDS.clear();
}

function memo<T>(cache: Map<string, T>, key: string, compute: () => T): T {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const value = compute();
  if (cache.size >= MEMO_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && WORD_CHAR.test(ch);
}

/**
 * Whether `needle` occurs in `haystack` (both already normalized) without starting or ending
 * inside a word: "no" is not found in "know", "contract" is not found in "contracts".
 */
export function containsWords(haystack: string, needle: string): boolean {
  return indexOfWords(haystack, needle) !== -1;
}

/** Like `String.indexOf`, for a match that does not start or end inside a word; -1 if none. */
export function indexOfWords(haystack: string, needle: string, from = 0): number {
  if (needle === '') return -1;
  const guardStart = isWordChar(needle[0]);
  const guardEnd = isWordChar(needle[needle.length - 1]);
  for (let at = haystack.indexOf(needle, from); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const before = haystack[at - 1];
    const after = haystack[at + needle.length];
    if ((!guardStart || !isWordChar(before)) && (!guardEnd || !isWordChar(after))) return at;
  }
  return -1;
}

/**
 * Whether the quote is in the turn: normalized on both sides (see `normalizeForQuote`), matched
 * on word boundaries. An empty or blank quote is never found.
 */
export function quoteFoundIn(quote: string, turnText: string): boolean {
  return containsWords(normalizeForQuote(turnText), normalizeForQuote(quote));
}

/**
 * Where a quote stands in the turn it was found in, as offsets into the turn's own text, so a
 * reviewer sees the quoted words marked inside the whole turn: the same normalization and word
 * boundaries as `quoteFoundIn`, folded one character at a time and mapped back. Null when the
 * quote is not in the turn, or is found only across a character that folds into several.
 */
export function locateQuote(
  turnText: string,
  quote: string,
): { start: number; end: number } | null {
  const needle = normalizeForQuote(quote);
  if (needle === '') return null;
  let folded = '';
  const origin: number[] = []; // origin[i]: the turn offset folded[i] came from
  let pendingSpace = false;
  for (let i = 0; i < turnText.length;) {
    const cp = turnText.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    const mapped = /\s/u.test(ch)
      ? ' '
      : mapPunctuation(mapPunctuation(ch).normalize('NFKC')).toLowerCase().replace(INVISIBLE, '');
    if (mapped === ' ') {
      pendingSpace = folded !== '';
    } else if (mapped !== '') {
      if (pendingSpace) {
        folded += ' ';
        origin.push(i - 1);
        pendingSpace = false;
      }
      for (const unit of mapped) {
        folded += unit;
        for (let k = 0; k < unit.length; k += 1) origin.push(i);
      }
    }
    i += ch.length;
  }
  const at = indexOfWords(folded, needle);
  if (at < 0) return null;
  const start = origin[at];
  const last = origin[at + needle.length - 1];
  if (start === undefined || last === undefined) return null;
  const lastCp = turnText.codePointAt(last) ?? 0;
  return { start, end: last + String.fromCodePoint(lastCp).length };
}

/**
 * English function words that say nothing about what a memory is about. Contractions are listed
 * whole; a possessive or contraction suffix is also stripped before the lookup (`user's` → `user`).
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  `
  a about above after again against all also am an and any anything are as at be because been
  before being below between both but by can can't cannot could couldn't did didn't do does
  doesn't doing don't down during each either else even ever every everything few for from
  further get got had hadn't has hasn't have haven't having he her here hers herself him
  himself his how however i if in into is isn't it its itself just let let's may me might more
  most much must my myself neither never no nor not nothing now of off oh ok okay on once one
  only or other our ours ourselves out own please really same shall she should shouldn't so
  some something such than that the their theirs them themselves then there these they this
  those through to too under until up upon us very was wasn't we were weren't what when where
  whether which while who whom whose why will with within without won't would wouldn't yes yet
  you your yours yourself yourselves
`
    .trim()
    .split(/\s+/u),
);

/** Suffixes stripped off before the stopword lookup: `user's` → `user`, `didn't` → `did`. */
const CLITIC = /(?:n't|'(?:s|re|ve|ll|d|m))$/u;
const TOKEN = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;
const VOWEL = /[aeiouy]/u;

function undouble(stem: string): string {
  const last = stem[stem.length - 1];
  const doubled =
    stem.length >= 4 && last === stem[stem.length - 2] && !/[aeiouylsz]/u.test(last ?? '');
  return doubled ? stem.slice(0, -1) : stem;
}

function stripPlural(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (/(?:ss|sh|ch|x|z)es$/u.test(w) && w.length - 2 >= 3) return w.slice(0, -2);
  if (w.endsWith('s') && !/(?:ss|us|is)$/u.test(w)) return w.slice(0, -1);
  return w;
}

function stripVerbal(w: string): string | null {
  if (w.length > 4 && w.endsWith('ied')) return `${w.slice(0, -3)}y`;
  for (const suffix of ['ing', 'ed']) {
    const stem = w.slice(0, -suffix.length);
    if (w.endsWith(suffix) && stem.length >= 3 && VOWEL.test(stem)) return undouble(stem);
  }
  return null;
}

/**
 * A deliberately light suffix stripper, so that inflections of one word compare equal
 * (`contracts`/`contract`, `decided`/`decide`/`deciding`, `recently`/`recent`). In order:
 * plural `-ies`→`y`, `-es` after s/sh/ch/x/z, `-s` (not after ss/us/is); then `-ied`→`y`, `-ing`
 * or `-ed` (when a stem of 3+ letters with a vowel remains; `planned`→`plan`), else `-ly` (stem of
 * 4+ letters, not `-ily`/`-ply`: `weekly`→`week`, `early` stays); a final `-e` is dropped when no
 * `-ing`/`-ed` was (so `decide` and `decided` both give `decid`). Stems need not be words; they
 * only have to agree. Tokens of 3 characters or fewer are left alone.
 */
export function stemToken(token: string): string {
  if (token.length <= 3 || !/^[a-z]+$/u.test(token)) return token;
  const plural = stripPlural(token);
  const verbal = stripVerbal(plural);
  if (verbal !== null) return verbal;
  const adverb =
    plural.endsWith('ly') && plural.length - 2 >= 4 && !/(?:i|p)ly$/u.test(plural)
      ? plural.slice(0, -2)
      : plural;
  return adverb.endsWith('e') && adverb.length - 1 >= 3 ? adverb.slice(0, -1) : adverb;
}

/** What `contentToken` made of each word lately (a text repeats its words; so do turns). */
const WORDS = new Map<string, string | null>();

function contentToken(raw: string): string | null {
  const known = WORDS.get(raw);
  if (known !== undefined) return known;
  const token = contentTokenOf(raw);
  if (WORDS.size >= MEMO_LIMIT * 4) WORDS.clear();
  WORDS.set(raw, token);
  return token;
}

function contentTokenOf(raw: string): string | null {
  if (STOPWORDS.has(raw)) return null;
  const base = raw.replace(CLITIC, '');
  if (base === '' || STOPWORDS.has(base)) return null;
  if (base.length === 1 && !/\p{N}/u.test(base)) return null;
  return stemToken(base);
}

/**
 * The distinct content words of a text, in order of first appearance: normalized
 * (`normalizeForQuote`), split into runs of letters and digits (an apostrophe inside a word
 * keeps it together), possessive and contraction suffixes stripped, stopwords and single letters
 * removed, then stemmed (`stemToken`).
 */
export function contentTokens(s: string): string[] {
  const tokens = memo(TOKENS, s, () => {
    const out = new Set<string>();
    for (const match of normalizeForQuote(s).matchAll(TOKEN)) {
      const token = contentToken(match[0]);
      if (token !== null) out.add(token);
    }
    return [...out];
  });
  return [...tokens];
}

/** Seed 000: at least this many of the text's distinct content tokens must be in the turn… */
export const ATTESTATION_MIN_OVERLAP = 2;
/** …and they must be at least this share of the text's distinct content tokens. */
export const ATTESTATION_MIN_RATIO = 0.6;

/**
 * Seed 000's attestation: the turn says what the text claims when the normalized text occurs in
 * the normalized turn (on word boundaries), or when at least `ATTESTATION_MIN_OVERLAP` of the
 * text's distinct content tokens, and at least `ATTESTATION_MIN_RATIO` of them, are in the turn.
 */
export function isAttestedBy(text: string, turnText: string): boolean {
  if (quoteFoundIn(text, turnText)) return true;
  const tokens = contentTokens(text);
  if (tokens.length === 0) return false;
  // Negators are stopwords, so the overlap alone cannot see "does not work nights" against
  // "I work nights": the two must also agree on whether they negate.
  if (negates(text) !== negates(turnText)) return false;
  const turnTokens = new Set(contentTokens(turnText));
  const overlap = tokens.filter((t) => turnTokens.has(t)).length;
  return overlap >= ATTESTATION_MIN_OVERLAP && overlap / tokens.length >= ATTESTATION_MIN_RATIO;
}

const NEGATOR = /\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b/;

/** Whether a text contains a negator (not, no, never, n't, …), after normalization. */
export function negates(s: string): boolean {
  return NEGATOR.test(normalizeForQuote(s));
}

/**
 * 0.8 on the Dice coefficient means nearly the same content words: a 5-word claim still matches
 * with one word added, dropped or inflected differently, while changing the object of a short
 * claim ("meeting moved to Tuesday" → "… Thursday", 2·2/(3+3) ≈ 0.67) falls below and is a new
 * claim, not the retracted one re-asserted.
 */
export const RETRACTED_SIMILARITY_THRESHOLD = 0.8;

/** A claim's distinct content tokens, "user" aside (every third-person line has it). */
function claimTokens(claim: string): string[] {
  return contentTokens(claim).filter((t) => t !== 'user');
}

/**
 * Whether `found` of a claim's `wanted` tokens reach `RETRACTED_SIMILARITY_THRESHOLD`, and the
 * claim has two tokens at least (one shared word says nothing).
 */
function enoughOf(found: number, wanted: number): boolean {
  return wanted >= 2 && found / wanted >= RETRACTED_SIMILARITY_THRESHOLD;
}

/**
 * Whether `text` says `claim`, whatever else it says: they agree on negation, and at least
 * `RETRACTED_SIMILARITY_THRESHOLD` of the claim's distinct content tokens (two at least; "user"
 * aside, which every third-person line has) are in the text. Where `similarity` compares two
 * claims, this finds a claim inside a longer sentence or turn ("…lives in central Paris and works
 * as a nurse" says "lives in Paris").
 */
export function containsClaim(text: string, claim: string): boolean {
  const wanted = claimTokens(claim);
  if (wanted.length < 2 || negates(text) !== negates(claim)) return false;
  const have = new Set(contentTokens(text));
  return enoughOf(wanted.filter((t) => have.has(t)).length, wanted.length);
}

/**
 * `containsClaim` against many claims at once: the index of the first claim the text says, or
 * -1 (arrival holds up to 8 recalled turns against every standing retraction, a thousand of them
 * in a long life). Each claim's tokens and negation are read once, and only the claims the text
 * could say are checked: a claim of `w` tokens is said only when at most `m` of them are missing
 * (`m` the most the threshold allows), so the text holds at least one of any `m + 1` of them.
 * Each claim is filed under its `m + 1` tokens fewest claims share, and a text is checked
 * against the claims filed under its own tokens (the prefix filter of set-similarity joins).
 */
export function claimMatcher(claims: readonly string[]): (text: string) => number {
  const wanted = claims.map(claimTokens);
  const negated = claims.map((claim, i) => ((wanted[i]?.length ?? 0) < 2 ? false : negates(claim)));
  const shared = new Map<string, number>();
  for (const tokens of wanted) for (const t of tokens) shared.set(t, (shared.get(t) ?? 0) + 1);
  const filed = new Map<string, number[]>();
  wanted.forEach((tokens, i) => {
    if (tokens.length < 2) return;
    let need = 1;
    while (!enoughOf(need, tokens.length)) need++;
    const rarest = [...tokens].sort(
      (a, b) => (shared.get(a) ?? 0) - (shared.get(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0),
    );
    for (const t of rarest.slice(0, tokens.length - need + 1)) {
      let list = filed.get(t);
      if (list === undefined) filed.set(t, (list = []));
      list.push(i);
    }
  });
  return (text) => {
    if (filed.size === 0) return -1;
    const have = new Set(contentTokens(text));
    let textNegates: boolean | undefined;
    let first = -1;
    for (const t of have) {
      for (const i of filed.get(t) ?? []) {
        if (first !== -1 && i >= first) continue;
        const tokens = wanted[i] as string[];
        let found = 0;
        for (const w of tokens) if (have.has(w)) found++;
        if (!enoughOf(found, tokens.length)) continue;
        textNegates ??= negates(text);
        if (textNegates === negated[i]) first = i;
      }
    }
    return first;
  };
}

/**
 * Similarity in [0, 1] of two texts: 1 when their normalized forms are equal (and not empty),
 * else the Dice coefficient over distinct content tokens, 2|A∩B| / (|A|+|B|); 0 when neither has
 * any content token.
 */
export function similarity(a: string, b: string): number {
  const na = normalizeForQuote(a);
  if (na === normalizeForQuote(b)) return na === '' ? 0 : 1;
  const ta = contentTokens(a);
  const tb = new Set(contentTokens(b));
  if (ta.length + tb.size === 0) return 0;
  const shared = ta.filter((t) => tb.has(t)).length;
  return (2 * shared) / (ta.length + tb.size);
}
