import { nextReceiptClose, nextReceiptMarker } from '../domain/receipt-marker.js';

/**
 * A model that reads receipts in its history starts writing its own. Those imitations are cut
 * out of assistant output before it is stored; the stored receipt comes only from the host.
 *
 * Rules (seed 004): every terminated `[[RECEIPT …]]` span is excised and the text on both sides
 * is kept, so a leading receipt never erases the answer. A marker is terminated by the first
 * "]]" that comes before any other marker. An unterminated last marker is cut to the end only
 * when text precedes it; one with nothing before it, or one followed by another marker, is left
 * alone, because cutting it could erase the answer.
 *
 * Markers and closes are found as the defanger finds them (`nextReceiptMarker`,
 * `nextReceiptClose`): after folding look-alikes (fullwidth, Cyrillic, Greek…) and skipping
 * characters that do not show (zero-width, soft hyphen, word joiner, bidi, tags).
 *
 * One forward scan: the kept text is collected in pieces, and the input after the scan position
 * is never rewritten, so the time is linear in the length of the input.
 */

/** The characters String.prototype.trim removes; the same set as the regex class `\s`. */
const WHITESPACE = /\s/;
const PUNCTUATION = /[.,;:!?)]/;

export interface StripResult {
  text: string;
  /** How many imitated receipts were removed. */
  removed: number;
}

const isSpaceOrTab = (c: string): boolean => c === ' ' || c === '\t';
const isWhitespace = (c: string): boolean => WHITESPACE.test(c);

/** The kept text so far, as pieces (never empty ones), and whether any of it is not whitespace. */
class Kept {
  private readonly pieces: string[] = [];
  private content = false;

  get hasContent(): boolean {
    return this.content;
  }

  push(piece: string): void {
    if (piece === '') return;
    this.pieces.push(piece);
    if (!this.content && /\S/.test(piece)) this.content = true;
  }

  /** Removes trailing characters that `strip` accepts (only whitespace, so content stays). */
  trimEnd(strip: (c: string) => boolean): void {
    while (this.pieces.length > 0) {
      const last = this.pieces[this.pieces.length - 1] as string;
      let i = last.length;
      while (i > 0 && strip(last[i - 1] as string)) i -= 1;
      if (i > 0) {
        if (i < last.length) this.pieces[this.pieces.length - 1] = last.slice(0, i);
        return;
      }
      this.pieces.pop();
    }
  }

  /** Drops everything kept so far; only called while none of it is content. */
  clear(): void {
    this.pieces.length = 0;
  }

  lastChar(): string {
    const last = this.pieces[this.pieces.length - 1];
    return last === undefined ? '' : (last[last.length - 1] as string);
  }

  join(rest: string): string {
    return this.pieces.join('') + rest;
  }
}

export function stripImitatedReceipts(input: string): StripResult {
  const n = input.length;
  let lastContent = n - 1;
  while (lastContent >= 0 && isWhitespace(input[lastContent] as string)) lastContent -= 1;

  // Positions only move forward, so each search result is reused until the scan passes it.
  let marker: { index: number; end: number } | null | undefined;
  const markerFrom = (from: number) => {
    if (marker === undefined || (marker !== null && marker.index < from)) {
      marker = nextReceiptMarker(input, from, true);
    }
    return marker;
  };
  let close: { index: number; end: number } | null | undefined;
  const closeFrom = (from: number) => {
    if (close === undefined || (close !== null && close.index < from)) {
      close = nextReceiptClose(input, from);
    }
    return close;
  };

  const kept = new Kept();
  let removed = 0;
  let copied = 0; // input before this is in `kept` (or was cut)
  let scan = 0; // where the next marker is looked for
  for (;;) {
    const found = markerFrom(scan);
    if (found === null) break;
    const start = found.index;
    const bodyStart = found.end;
    const nextStart = markerFrom(bodyStart)?.index ?? -1;
    const closing = closeFrom(bodyStart);
    const end = closing?.index ?? -1;
    const terminated = closing !== null && (nextStart < 0 || end < nextStart);
    if (!terminated) {
      // A marker that another marker follows before any "]]" has no knowable extent: leave it.
      if (nextStart >= 0) {
        scan = bodyStart;
        continue;
      }
      kept.push(input.slice(copied, start));
      copied = start;
      if (!kept.hasContent) break;
      kept.trimEnd(isWhitespace);
      copied = n;
      removed += 1;
      break;
    }
    kept.push(input.slice(copied, start));
    kept.trimEnd(isSpaceOrTab);
    removed += 1;
    let right = (closing as { end: number }).end;
    if (!kept.hasContent) {
      // Nothing but whitespace before the receipt: the text starts after it.
      kept.clear();
      while (right < n && isWhitespace(input[right] as string)) right += 1;
    } else if (lastContent < right) {
      // Nothing but whitespace after the receipt: the text ends before it.
      kept.trimEnd(isWhitespace);
      copied = n;
      break;
    } else {
      while (right < n && isSpaceOrTab(input[right] as string)) right += 1;
      const next = input[right] as string;
      if (kept.lastChar() !== '\n' && next !== '\n' && !PUNCTUATION.test(next)) kept.push(' ');
    }
    copied = right;
    scan = right;
  }
  return { text: kept.join(input.slice(copied)), removed };
}
