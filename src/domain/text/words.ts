/**
 * The words of English text, as every part of memledger reads them (recall's index, the gate,
 * attestation, summaries): the tokenizer, the stopwords, the lemmas of irregular forms and the
 * stemmer. Pure and deterministic.
 */

import porter2 from 'wink-porter2-stemmer';
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

/**
 * The words of text already folded (`normalizeForQuote`), stopwords and all, in order: runs of
 * letters and digits in any script, an apostrophe inside a word keeping it together ("don't").
 */
export function foldedWords(folded: string): string[] {
  return folded.match(TOKEN) ?? [];
}

/**
 * Irregular forms and words people use for each other's, mapped to one base word before stemming:
 * "said"/"say", "went"/"go", "kids"/"children", "Sept"/"September", "two"/"2". A Map, so that a
 * word such as "constructor" or "__proto__" finds nothing (an object literal would hand back
 * Object.prototype's members).
 */
const LEMMA: ReadonlyMap<string, string> = new Map(
  Object.entries({
    said: 'say',
    spent: 'spend',
    went: 'go',
    goes: 'go',
    going: 'go',
    gone: 'go',
    told: 'tell',
    bought: 'buy',
    made: 'make',
    took: 'take',
    taken: 'take',
    ran: 'run',
    began: 'begin',
    begun: 'begin',
    came: 'come',
    coming: 'come',
    saw: 'see',
    seen: 'see',
    met: 'meet',
    paid: 'pay',
    sold: 'sell',
    taught: 'teach',
    thought: 'think',
    wrote: 'write',
    written: 'write',
    drove: 'drive',
    driven: 'drive',
    flew: 'fly',
    flown: 'fly',
    felt: 'feel',
    kept: 'keep',
    lost: 'lose',
    won: 'win',
    found: 'find',
    gave: 'give',
    given: 'give',
    knew: 'know',
    known: 'know',
    spoke: 'speak',
    spoken: 'speak',
    ate: 'eat',
    eaten: 'eat',
    broke: 'break',
    broken: 'break',
    chose: 'choose',
    chosen: 'choose',
    grew: 'grow',
    grown: 'grow',
    sent: 'send',
    built: 'build',
    left: 'leave',
    lent: 'lend',
    slept: 'sleep',
    swam: 'swim',
    wore: 'wear',
    worn: 'wear',
    born: 'bear',
    kid: 'child',
    kids: 'child',
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
    five: '5',
    six: '6',
    seven: '7',
    eight: '8',
    nine: '9',
    ten: '10',
    eleven: '11',
    twelve: '12',
  }),
);

/**
 * A folded word's form for comparison: its lemma (`LEMMA`), then the Porter2 (Snowball English)
 * stemmer, so that inflections of one word compare equal ("contracts"/"contract",
 * "decided"/"deciding", "went"/"goes"). Stems need not be words; they only have to agree. Not a
 * stopword check: every word has a form ("owns" → "own").
 */
export const wordForm = memoized(2048 * 4, (word: string): string =>
  word.length > LONGEST_STEMMED ? longWordForm(word) : porter2(LEMMA.get(word) ?? word),
);

/**
 * The longest word the stemmer is given. No English word comes near it; the stemmer's time grows
 * with the square of a word's length (a 20,000-letter run took seconds), and a term longer than
 * about 2,700 bytes cannot be indexed at all (a message holding one could not be recorded).
 */
export const LONGEST_STEMMED = 64;

/**
 * A longer run of letters as one bounded term: its first 48 code points, "~", and a 32-bit FNV-1a
 * hash of the whole run in hex, so two long runs that differ anywhere stay two terms. "~" is
 * never part of a word, so no word's form is ever one of these.
 */
function longWordForm(word: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // cut by code points: a letter outside the BMP is never split into a lone surrogate
  return `${Array.from(word).slice(0, 48).join('')}~${(h >>> 0).toString(16).padStart(8, '0')}`;
}

/** A folded word's content form, or null for a stopword or a single letter. */
const contentForm = memoized(2048 * 4, (raw: string): string | null => {
  if (STOPWORDS.has(raw)) return null;
  const base = raw.replace(CLITIC, '');
  if (base === '' || STOPWORDS.has(base)) return null;
  if (base.length === 1 && !/\p{N}/u.test(base)) return null;
  return wordForm(base);
});

/**
 * The content words of a text, in order, with repeats: normalized (`normalizeForQuote`), split
 * into runs of letters and digits (an apostrophe inside a word keeps it together), possessive and
 * contraction suffixes stripped, stopwords and single letters removed, then each word's form
 * (`wordForm`: its lemma, stemmed).
 */
export function contentWords(s: string): string[] {
  const out: string[] = [];
  for (const word of foldedWords(normalizeForQuote(s))) {
    const form = contentForm(word);
    if (form !== null) out.push(form);
  }
  return out;
}

/**
 * Each content form of a text (`contentWords`) with the word it was first made from, as the text
 * has it (folded, its clitic cut): for a reason a person reads, which quotes words, not stems
 * ("lives", not "liv"). A function word's form is there too ("owns" for "own").
 */
export function formWords(s: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const word of foldedWords(normalizeForQuote(s))) {
    const form = contentForm(word) ?? wordForm(word);
    if (!out.has(form)) out.set(form, word.replace(CLITIC, '') || word);
  }
  return out;
}

/** The distinct content words of a text (`contentWords`), in order of first appearance. */
export function contentTokens(s: string): string[] {
  return [...distinctTokens(s)];
}

const distinctTokens = memoized(2048, (s: string): readonly string[] => [
  ...new Set(contentWords(s)),
]);
