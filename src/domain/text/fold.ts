/**
 * Folding text for comparison: the normalization under which a quote is looked for in a turn,
 * and finding one folded text inside another on word boundaries. Pure and deterministic.
 */

import { collapseWhitespace } from '../shown-text.js';
import { memoized } from './memo.js';

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
export const normalizeForQuote = memoized(2048, (s: string): string => {
  // Plain ASCII without a backtick is already folded: skip the mapping and NFKC passes.
  const folded = PLAIN_ASCII.test(s) ? s : mapPunctuation(mapPunctuation(s).normalize('NFKC'));
  return collapseWhitespace(folded.toLowerCase().replace(INVISIBLE, '')).trim();
});

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

/** One character as `normalizeForQuote` folds it (plain ASCII only lowercased). */
const foldChar = memoized(4096, (ch: string): string =>
  PLAIN_ASCII.test(ch)
    ? ch.toLowerCase()
    : mapPunctuation(mapPunctuation(ch).normalize('NFKC')).toLowerCase().replace(INVISIBLE, ''),
);

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
    const mapped = /\s/u.test(ch) ? ' ' : foldChar(ch);
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
