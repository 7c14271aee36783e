/**
 * Comparing what two texts say, on their content words: seed 000's attestation, negation, and
 * the similarity that recognises a retracted claim said again. Pure and deterministic.
 */

import { quoteFoundIn, normalizeForQuote } from './fold.js';
import { contentTokens, wordForm } from './words.js';

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
const USER = wordForm('user');

function claimTokens(claim: string): string[] {
  return contentTokens(claim).filter((t) => t !== USER);
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
