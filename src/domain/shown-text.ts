/**
 * How a string memledger did not write (a fact's text, a slot, a session title, a tool name, a
 * turn's words) is shown in front of a model. Law 1 says every line a model reads carries its
 * passport, and only memledger writes receipts; a stored string that could start a line of its own,
 * or imitate a receipt, would break both. These rules run when text is rendered, not when it is
 * stored, so rows already in a store are covered too. Pure.
 */

/**
 * Line breaks and the other vertical whitespace (LF, VT, FF, CR, NEL U+0085, LINE SEPARATOR
 * U+2028, PARAGRAPH SEPARATOR U+2029) and every other control character (C0, DEL, C1, tab
 * included), in runs.
 */
// eslint-disable-next-line no-control-regex
const BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu;

/**
 * A string as part of one line: every run of line breaks and control characters becomes a single
 * space. Text without any is returned unchanged (nothing is trimmed). Linear in the length.
 */
export function oneLine(text: string): string {
  return text.replace(BREAKS_AND_CONTROLS, ' ');
}

/** Whitespace other than a lone space: a run of two or more, or one that is not U+0020. */
const SPACE_RUNS = /\s{2,}|[^\S ]/gu;

/**
 * Every run of whitespace (Unicode's, as `\s` reads it) as one space: the same string as
 * `text.replace(/\s+/gu, ' ')`, but a lone space, by far the commonest run, is not matched and
 * replaced by itself (five times faster on a turn's 960 characters).
 */
export function collapseWhitespace(text: string): string {
  return text.replace(SPACE_RUNS, ' ');
}

/**
 * A receipt marker: `[[`, then any whitespace, control or invisible format characters (which do
 * not show, or read as space once a line is flattened), then `RECEIPT`, in any case.
 */
// eslint-disable-next-line no-control-regex
const RECEIPT_MARKER = /\[\[([\s\u0000-\u001f\u007f-\u009f\p{Cf}]*RECEIPT)/giu;

/**
 * A `[[RECEIPT` marker in text memledger did not write is shown as quoted (`[ [RECEIPT`), so it
 * can never read as one of memledger's receipt lines. Everything else is unchanged.
 */
export function defangReceiptMarkers(text: string): string {
  return text.replace(RECEIPT_MARKER, '[ [$1');
}

/**
 * A turn's content as history and recall show it. An assistant turn's is shown as stored: the
 * imitated receipts in it were cut out when it was recorded. A user, system or tool turn's has
 * its receipt markers defanged (`defangReceiptMarkers`). Its lines are kept. (`role` is a
 * `TurnRole`, typed as a string so that turn.ts, which stands on receipt.ts, is not imported.)
 */
export function shownTurnContent(role: string, content: string): string {
  return role === 'assistant' ? content : defangReceiptMarkers(content);
}

/**
 * A string memledger did not write, inside a line memledger writes (a fact line, an arrival
 * block, a recall line): on that one line (`oneLine`), its receipt markers defanged.
 */
export function shownInline(text: string): string {
  return defangReceiptMarkers(oneLine(text));
}
