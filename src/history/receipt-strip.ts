/**
 * A model that reads receipts in its history starts writing its own. Those imitations are cut
 * out of assistant output before it is stored; the stored receipt comes only from the host.
 *
 * Rules (seed 004): every terminated `[[RECEIPT …]]` span is excised and the text on both sides
 * is kept, so a leading receipt never erases the answer. A marker is terminated by the first
 * "]]" that comes before any other marker. An unterminated last marker is cut to the end only
 * when text precedes it; one with nothing before it, or one followed by another marker, is left
 * alone, because cutting it could erase the answer.
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
  if (l.endsWith('\n') || r.startsWith('\n') || /^[.,;:!?)]/.test(r)) return l + r;
  return `${l} ${r}`;
}

export function stripImitatedReceipts(input: string): StripResult {
  let text = input;
  let removed = 0;
  let from = 0;
  // Each pass removes one marker, steps past it, or stops: bounded by the number of markers.
  for (;;) {
    const match = MARKER.exec(text.slice(from));
    if (match === null) break;
    const start = from + match.index;
    const bodyStart = start + match[0].length;
    const next = MARKER.exec(text.slice(bodyStart));
    const nextStart = next === null ? -1 : bodyStart + next.index;
    const end = text.indexOf(CLOSE, bodyStart);
    const terminated = end >= 0 && (nextStart < 0 || end < nextStart);
    if (!terminated) {
      // A marker that another marker follows before any "]]" has no knowable extent: leave it.
      if (nextStart >= 0) {
        from = bodyStart;
        continue;
      }
      const before = text.slice(0, start);
      if (before.trim().length === 0) break;
      text = before.replace(/\s+$/, '');
      removed += 1;
      break;
    }
    const left = text.slice(0, start);
    const joined = joinSeam(left, text.slice(end + CLOSE.length));
    from =
      left.trim().length === 0 ? 0 : Math.min(joined.length, left.replace(/[ \t]+$/, '').length);
    text = joined;
    removed += 1;
  }
  return { text, removed };
}
