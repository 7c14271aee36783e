// The look-alike receipt markers of issue 33 (finding 8): what a reader takes for `[[RECEIPT`.
// Each test of the marker rule starts from these, and adds its own.

/** The five look-alikes issue 33 found passing, and the plain marker. */
export const ISSUE_33_MARKERS: ReadonlyArray<readonly [string, string]> = [
  ['plain', '[[RECEIPT'],
  ['a zero-width space between the brackets', '[\u200b[RECEIPT'],
  ['fullwidth brackets', '［［RECEIPT'],
  ['a zero-width space inside the word', '[[R\u200bECEIPT'],
  ['a Cyrillic Е', '[[R\u0415CEIPT'],
  ['a fullwidth word', '[[ＲＥＣＥＩＰＴ'],
];

/** Format characters that do not show, after the brackets (the two issue 33 found) and inside. */
export const HIDDEN_FORMAT_MARKERS: ReadonlyArray<readonly [string, string]> = [
  ['a soft hyphen after the brackets', '[[\u00adRECEIPT'],
  ['a word joiner after the brackets', '[[\u2060RECEIPT'],
  ['a soft hyphen inside the word', '[[RE\u00adCEIPT'],
  ['a word joiner inside the word', '[[REC\u2060EIPT'],
];
