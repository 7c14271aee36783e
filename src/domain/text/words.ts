/**
 * The words of English text, as every part of memledger reads them: the tokenizer, the stopwords,
 * the stemmer and the lemmas of irregular forms. Pure and deterministic.
 */

import { normalizeForQuote } from './fold.js';
import { memoized } from './memo.js';

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

const contentToken = memoized(2048 * 4, (raw: string): string | null => {
  if (STOPWORDS.has(raw)) return null;
  const base = raw.replace(CLITIC, '');
  if (base === '' || STOPWORDS.has(base)) return null;
  if (base.length === 1 && !/\p{N}/u.test(base)) return null;
  return stemToken(base);
});

/**
 * The distinct content words of a text, in order of first appearance: normalized
 * (`normalizeForQuote`), split into runs of letters and digits (an apostrophe inside a word
 * keeps it together), possessive and contraction suffixes stripped, stopwords and single letters
 * removed, then stemmed (`stemToken`).
 */
export function contentTokens(s: string): string[] {
  return [...distinctTokens(s)];
}

const distinctTokens = memoized(2048, (s: string): readonly string[] => {
  const out = new Set<string>();
  for (const match of normalizeForQuote(s).matchAll(TOKEN)) {
    const token = contentToken(match[0]);
    if (token !== null) out.add(token);
  }
  return [...out];
});

/**
 * Irregular forms, as the shared stemmer leaves them, mapped to one lemma (attestation reads lemmas; the recall index keeps
 * its own tokens): "said"/"say", "spent"/"spend", "coming"/"came".
 */
const LEMMA: Readonly<Record<string, string>> = {
  said: 'say',
  spent: 'spend',
  went: 'go',
  goe: 'go',
  gon: 'go',
  told: 'tell',
  bought: 'buy',
  made: 'mak',
  took: 'tak',
  taken: 'tak',
  ran: 'run',
  began: 'begin',
  begun: 'begin',
  cam: 'com',
  saw: 'see',
  seen: 'see',
  met: 'meet',
  paid: 'pay',
  sold: 'sell',
  taught: 'teach',
  thought: 'think',
  wrote: 'writ',
  written: 'writ',
  drove: 'driv',
  driven: 'driv',
  flew: 'fly',
  flown: 'fly',
  felt: 'feel',
  kept: 'keep',
  lost: 'los',
  won: 'win',
  found: 'find',
  gave: 'giv',
  given: 'giv',
  knew: 'know',
  known: 'know',
  spoke: 'speak',
  spoken: 'speak',
  ate: 'eat',
  eaten: 'eat',
  broke: 'break',
  broken: 'break',
  chose: 'choos',
  chosen: 'choos',
  grew: 'grow',
  grown: 'grow',
  sent: 'send',
  built: 'build',
  left: 'leav',
  leaving: 'leav',
  lent: 'lend',
  slept: 'sleep',
  swam: 'swim',
  wore: 'wear',
  worn: 'wear',
  born: 'bear',
  going: 'go',
  // a few words people use for each other's: "kids" and "children", "uni" and "university"
  kid: 'child',
  children: 'child',
  uni: 'university',
  jan: 'january',
  feb: 'february',
  mar: 'march',
  apr: 'april',
  jun: 'june',
  jul: 'july',
  aug: 'august',
  sep: 'september',
  sept: 'september',
  oct: 'october',
  nov: 'november',
  dec: 'december',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  fiv: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nin: '9',
  ten: '10',
  eleven: '11',
  twelv: '12',
};

export const lemma = (t: string): string => LEMMA[t] ?? t;

/** Lemmas of a text's content tokens (`contentTokens`, irregular forms mapped). */
export function lemmas(text: string): string[] {
  return contentTokens(text).map(lemma);
}
