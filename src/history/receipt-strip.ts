/**
 * A model that reads receipts in its history starts writing its own. Those imitations are cut
 * out of assistant output before it is stored; the stored receipt comes only from the host.
 *
 * Rules (seed 004): every terminated `[[RECEIPT …]]` span is excised and the text on both sides
 * is kept, so a leading receipt never erases the answer. An unterminated marker is cut to the
 * end only when text precedes it; one with nothing before it is left alone, because cutting it
 * would erase the whole answer.
 */
const MARKER = /\[\[\s*RECEIPT\b/i;
const CLOSE = ']]';

export interface StripResult {
  text: string;
  /** How many imitated receipts were removed. */
  removed: number;
}

function joinSeam(left: string, right: string): string {
  const l = left.replace(/[ \t]+$/, '');
  const r = right.replace(/^[ \t]+/, '');
  if (l.trim().length === 0) return r.replace(/^\s+/, '');
  if (r.trim().length === 0) return l.replace(/\s+$/, '');
  if (l.endsWith('\n') || r.startsWith('\n')) return l + r;
  return `${l} ${r}`;
}

export function stripImitatedReceipts(input: string): StripResult {
  let text = input;
  let removed = 0;
  let from = 0;
  // Each pass removes one marker or stops, so the loop is bounded by the number of markers.
  for (;;) {
    const match = MARKER.exec(text.slice(from));
    if (match === null) break;
    const start = from + match.index;
    const end = text.indexOf(CLOSE, start + match[0].length);
    if (end < 0) {
      const before = text.slice(0, start);
      if (before.trim().length === 0) break;
      text = before.replace(/\s+$/, '');
      removed += 1;
      break;
    }
    const left = text.slice(0, start);
    const joined = joinSeam(left, text.slice(end + CLOSE.length));
    from = Math.min(joined.length, left.replace(/[ \t]+$/, '').length);
    if (left.trim().length === 0) from = 0;
    text = joined;
    removed += 1;
  }
  return { text, removed };
}
