/**
 * Where a receipt marker (`[[RECEIPT`) or a receipt's close (`]]`) stands in text memledger did not
 * write, read as a model reads it rather than byte for byte: each character folded to what it
 * looks like (NFKD compatibility forms such as fullwidth `［［ＲＥＣＥＩＰＴ`, accents dropped, and the
 * Cyrillic, Greek and other letters that look like the Latin ones), invisible characters (format
 * and default-ignorable ones: zero-width, soft hyphen, word joiner, bidi controls, tags) and
 * combining marks skipped, any case. Pure; linear in the length (only brackets start a look).
 */

/**
 * Look-alikes NFKD leaves as they are (it maps the fullwidth and mathematical forms itself),
 * for the characters of the marker and its close. `[[` and `]]`: one character that looks like two.
 */
const LOOK_ALIKES: ReadonlyArray<readonly [string, string]> = [
  ['[', '\u2045\u2772\u298b\u298d\u298f\u23a1\u23a3'],
  ['[[', '\u27e6\u301a'],
  [']', '\u2046\u2773\u298c\u298e\u2990\u23a4\u23a6'],
  [']]', '\u27e7\u301b'],
  ['R', '\u13a1\u13d2\ua4e3\u0280\u01a6'],
  ['E', '\u0415\u0435\u0395\u13ac\ua4f0\u1d07\u2d39'],
  ['C', '\u0421\u0441\u03f9\u03f2\u13df\ua4da\u1d04\u2ca4\u2ca5'],
  ['I', 'l1|\u0406\u0456\u04c0\u04cf\u0399\u03b9\u026a\u01c0\u2c92\ua4f2'],
  ['P', '\u0420\u0440\u03a1\u03c1\u13e2\ua4d1\u1d18\u2ca2\u2ca3'],
  ['T', '\u0422\u0442\u03a4\u03c4\u13a2\ua4d4\u1d1b\u22a4\u2ca6'],
];

const FOLDS = new Map<number, string>(
  LOOK_ALIKES.flatMap(([to, from]) => [...from].map((c) => [c.codePointAt(0) as number, to])),
);

/** Characters a reader does not see: skipped inside a marker. */
const UNSEEN = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{M}]$/u;
/** Whitespace and controls: a gap (allowed between `[[` and `RECEIPT`, nowhere else). */
const GAP = /^[\s\p{Cc}]$/u;
const MARKS = /\p{M}/gu;

/**
 * What one code point reads as: '' when unseen, ' ' for a gap, else its look-alike in capitals
 * (`[`, `[[`, `]`, `]]`, a letter) or its NFKD form without marks, in capitals.
 */
function fold(cp: number): string {
  const folded = FOLDS.get(cp);
  if (folded !== undefined) return folded;
  if (cp < 0x80) return cp <= 0x20 || cp === 0x7f ? ' ' : String.fromCharCode(cp).toUpperCase();
  const c = String.fromCodePoint(cp);
  if (UNSEEN.test(c)) return '';
  if (GAP.test(c)) return ' ';
  const plain = c.normalize('NFKD').replace(MARKS, '');
  return (plain.length === 1 ? FOLDS.get(plain.charCodeAt(0)) : undefined) ?? plain.toUpperCase();
}

/** Every character whose fold begins a marker or a close (NFKD maps U+FE47/8 and U+FF3B/D). */
const OPENERS = /[[\ufe47\uff3b\u2045\u2772\u298b\u298d\u298f\u23a1\u23a3\u27e6\u301a]/gu;
const CLOSERS = /[\]\ufe48\uff3d\u2046\u2773\u298c\u298e\u2990\u23a4\u23a6\u27e7\u301b]/gu;

const WORD = 'RECEIPT';

/** Where a marker's brackets end (`bracketsEnd`) and the marker ends (`end`, after its T). */
export interface MarkerSpan {
  index: number;
  bracketsEnd: number;
  end: number;
}

/** Two brackets (`[`+`[`, or one `[[`) from `at`, unseen characters between them: the end, or -1. */
function pairAt(text: string, at: number, one: string): number {
  let i = at;
  let seen = 0;
  while (i < text.length && seen < 2) {
    const cp = text.codePointAt(i) as number;
    const f = fold(cp);
    if (f === one + one && seen === 0) seen = 2;
    else if (f === one) seen += 1;
    else if (f !== '' || seen === 0) return -1;
    i += cp > 0xffff ? 2 : 1;
  }
  return seen === 2 ? i : -1;
}

const WORD_CHAR = /^[\p{L}\p{N}_]/u;

/** Whether the next character a reader sees from `at` continues a word (RECEIPTS, RECEIPT2). */
function wordGoesOn(text: string, at: number): boolean {
  for (let i = at; i < text.length;) {
    const cp = text.codePointAt(i) as number;
    const f = fold(cp);
    if (f !== '') return WORD_CHAR.test(f);
    i += cp > 0xffff ? 2 : 1;
  }
  return false;
}

function markerAt(text: string, at: number, wholeWord: boolean): MarkerSpan | null {
  const bracketsEnd = pairAt(text, at, '[');
  if (bracketsEnd < 0) return null;
  let i = bracketsEnd;
  let letter = 0;
  while (i < text.length && letter < WORD.length) {
    const cp = text.codePointAt(i) as number;
    const f = fold(cp);
    i += cp > 0xffff ? 2 : 1;
    if (f === '' || (f === ' ' && letter === 0)) continue;
    if (f !== WORD[letter]) return null;
    letter += 1;
  }
  if (letter < WORD.length || (wholeWord && wordGoesOn(text, i))) return null;
  return { index: at, bracketsEnd, end: i };
}

/**
 * The first receipt marker at or after `from`: two opening brackets (unseen characters between
 * them, but no space: `[ [RECEIPT` is how a defanged marker reads), any gap, then the letters of
 * RECEIPT (unseen characters between them). `wholeWord`: only where RECEIPT ends a word (the
 * receipt cutter, which removes text, leaves `[[RECEIPTS]]` alone; the defanger quotes it too).
 */
export function nextReceiptMarker(text: string, from = 0, wholeWord = false): MarkerSpan | null {
  OPENERS.lastIndex = from;
  for (let m = OPENERS.exec(text); m !== null; m = OPENERS.exec(text)) {
    const span = markerAt(text, m.index, wholeWord);
    if (span !== null) return span;
  }
  return null;
}

/** The first receipt close (`]]`, or a look-alike) at or after `from`: where it starts and ends. */
export function nextReceiptClose(text: string, from = 0): { index: number; end: number } | null {
  CLOSERS.lastIndex = from;
  for (let m = CLOSERS.exec(text); m !== null; m = CLOSERS.exec(text)) {
    const end = pairAt(text, m.index, ']');
    if (end >= 0) return { index: m.index, end };
  }
  return null;
}

/**
 * Text memledger did not write with every receipt marker shown as quoted: its brackets (and
 * whatever unseen characters stood between them) become `[ [`, so it can never read as one of
 * memledger's receipt lines. Everything else is unchanged.
 */
export function defangReceiptMarkers(text: string): string {
  let out = '';
  let copied = 0;
  for (let m = nextReceiptMarker(text); m !== null; m = nextReceiptMarker(text, m.end)) {
    out += `${text.slice(copied, m.index)}[ [`;
    copied = m.bracketsEnd;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
