import { defangReceiptMarkers } from './receipt-marker.js';

/**
 * How a string memledger did not write (a turn's words, a fact's text, a slot, a session title, a
 * commitment, an action, a retraction's fields, a tool name) is shown in front of a model. Law 1
 * says every line a model reads carries its passport, and only memledger writes receipts; a stored
 * string that could start a line of its own, imitate a receipt, or carry characters a reader
 * cannot see would break both. `shownText` is the one rule, on every face (docs/TRUST.md, "Text
 * from the store"). It runs when text is shown, not when it is stored, so rows already in a store
 * are covered too. Pure.
 */

export { defangReceiptMarkers } from './receipt-marker.js';

/**
 * How shown text keeps its lines:
 * - `inline`: on the one line memledger writes it into (a fact line, an arrival block, a recall
 *   line, a passport): every run of line breaks and tabs is one space.
 * - `lines`: a JSON string's data, where each message or record is its own object: line breaks
 *   kept, as `\n`.
 * - `indented`: a turn's body in the text of a history: every line after the first starts with
 *   `CONTINUATION_INDENT`, so no stored line can begin a line of memledger's own.
 */
export const SHOWN_LAYOUTS = ['inline', 'lines', 'indented'] as const;
/** One of `SHOWN_LAYOUTS`. */
export type ShownLayout = (typeof SHOWN_LAYOUTS)[number];

/**
 * What begins every continuation line of a turn in a history's text. memledger's own lines there
 * (`#N role [time]: …`, its receipt lines, `[N earlier turns omitted]`) never begin with a space.
 */
export const CONTINUATION_INDENT = '    ';

/**
 * A line break as any common reader splits lines (CRLF, LF, VT, FF, CR, the file, group and record
 * separators Python breaks on, NEL, LINE and PARAGRAPH SEPARATOR); in `inline`, runs of them and
 * tabs. Then tag characters (U+E0000–E007F) in runs, then a run of one character that does not
 * show: a control, a format character (zero-width ones, soft hyphen, bidi controls) or any other
 * default-ignorable one (variation selectors, Hangul fillers, the combining grapheme joiner).
 */
const HIDDEN = String.raw`([\u{E0000}-\u{E007F}]+)|(?<hidden>[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}])\k<hidden>*`;
const INLINE = new RegExp(
  String.raw`([\t\n\v\f\r\u001c-\u001e\u0085\u2028\u2029]+)|${HIDDEN}`,
  'gu',
);
const BLOCK = new RegExp(
  String.raw`(\r\n|[\n\v\f\r\u001c-\u001e\u0085\u2028\u2029])|(\t)|${HIDDEN}`,
  'gu',
);

/** `<U+200B>`: a code point as a reader can see it. */
const codePoint = (cp: number): string => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/** Scripts whose spelling uses ZWNJ and ZWJ between letters (Persian, Hindi, Sinhala…). */
const JOINING =
  /[\p{scx=Arab}\p{scx=Syrc}\p{scx=Thaa}\p{scx=Nkoo}\p{scx=Mong}\p{scx=Deva}\p{scx=Beng}\p{scx=Guru}\p{scx=Gujr}\p{scx=Orya}\p{scx=Taml}\p{scx=Telu}\p{scx=Knda}\p{scx=Mlym}\p{scx=Sinh}\p{scx=Mymr}\p{scx=Khmr}\p{scx=Tibt}]/u;
/** A letter or a mark: what a joiner may stand between (not a format character of the script). */
const LETTER = /[\p{L}\p{M}]/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const EMOJI_END = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u;
const VISIBLE = /[^\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

function before(text: string, at: number): string {
  const low = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && at >= 2
    ? text.slice(at - 2, at)
    : text.slice(at - 1, at);
}

function after(text: string, at: number): string {
  const cp = text.codePointAt(at);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/**
 * Whether a lone invisible character is part of how something visible is written, and is kept:
 * ZWJ inside an emoji sequence (👩‍💻), ZWNJ or ZWJ between two letters (or marks) of a script that
 * spells with them (می‌خواهم; not between two of its format characters, such as U+061C), and one emoji or text presentation selector (U+FE0F, U+FE0E) after a
 * visible character. Such a character cannot hide a receipt marker (the marker match skips it).
 */
function spells(cp: number, text: string, at: number): boolean {
  const prev = before(text, at);
  if (cp === 0xfe0f || cp === 0xfe0e) return prev !== '' && VISIBLE.test(prev);
  if (cp !== 0x200c && cp !== 0x200d) return false;
  const next = after(text, at + 1);
  if (cp === 0x200d && EMOJI_END.test(prev) && PICTOGRAPH.test(next)) return true;
  return JOINING.test(prev) && LETTER.test(prev) && JOINING.test(next) && LETTER.test(next);
}

/**
 * A stored string as a model is shown it, in a layout (`SHOWN_LAYOUTS`, default `inline`):
 * - receipt markers defanged, look-alikes too (`defangReceiptMarkers`: `[ [RECEIPT`);
 * - line breaks laid out (`inline`: a run of them, with tabs, is one space; `lines`: `\n`;
 *   `indented`: `\n` and `CONTINUATION_INDENT`);
 * - every character that does not show is shown as its code point: controls, zero-width and
 *   format characters, bidi controls, variation selectors (`<U+202E>`, a run of one character
 *   `<U+200B ×3>`), and a run of tag characters as their block and count
 *   (`<U+E0000–E007F ×24>`), so none can carry words a reader does not see. Only the joiners and
 *   selectors that spell something visible are kept (`spells`).
 * Text with nothing of the kind is returned unchanged; nothing is trimmed. Linear in the length.
 * `inline` and `lines` change nothing more when applied again, and `inline` after `lines` is
 * `inline`.
 */
export function shownText(text: string, layout: ShownLayout = 'inline'): string {
  const defanged = defangReceiptMarkers(text);
  const breakTo = layout === 'indented' ? `\n${CONTINUATION_INDENT}` : '\n';
  return defanged.replace(
    layout === 'inline' ? INLINE : BLOCK,
    (
      match: string,
      lineBreak: string | undefined,
      ...rest: Array<string | number | undefined>
    ): string => {
      if (lineBreak !== undefined) return layout === 'inline' ? ' ' : breakTo;
      // the block layouts have one more group (a tab, kept) before the hidden ones
      const [tab, tags, hidden] = layout === 'inline' ? [undefined, ...rest] : rest;
      if (tab !== undefined) return match;
      const at = rest[layout === 'inline' ? 2 : 3] as number;
      if (typeof tags === 'string') {
        const n = [...tags].length;
        return n === 1 ? `<${codePoint(tags.codePointAt(0) as number)}>` : `<U+E0000–E007F ×${n}>`;
      }
      const cp = (hidden as string).codePointAt(0) as number;
      const n = match.length / (hidden as string).length;
      if (n === 1 && spells(cp, defanged, at)) return match;
      return n === 1 ? `<${codePoint(cp)}>` : `<${codePoint(cp)} ×${n}>`;
    },
  );
}

/** A stored string inside a line memledger writes: `shownText(text, 'inline')`. */
export function shownInline(text: string): string {
  return shownText(text, 'inline');
}

/**
 * A JSON value (an HTTP answer, an MCP tool's structured content) as a model is shown it: every
 * string in it, keys too, through `shownText(…, 'lines')`; other values as they are.
 */
export function shownJson(value: unknown): unknown {
  if (typeof value === 'string') return shownText(value, 'lines');
  if (Array.isArray(value)) return value.map(shownJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [shownText(k, 'lines'), shownJson(v)]),
  );
}

/**
 * Line breaks and the other vertical whitespace (LF, VT, FF, CR, NEL U+0085, LINE SEPARATOR
 * U+2028, PARAGRAPH SEPARATOR U+2029) and every other control character (C0, DEL, C1, tab
 * included), in runs.
 */
// eslint-disable-next-line no-control-regex
const BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu;

/**
 * A string as part of one line: every run of line breaks and control characters becomes a single
 * space. Text without any is returned unchanged (nothing is trimmed). Linear in the length. Not
 * for stored text a model reads (`shownText` is): it leaves invisible characters as they are.
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
 * An id from the store, as a model is shown it inside memledger's own words. An id of an id's
 * shape is shown as it is; any other is shown as a placeholder, because a row's id could hold "]"
 * and sentences of its own.
 */
export function shownId(id: string): string {
  return /^[A-Za-z0-9_.:@-]{1,128}$/u.test(id) ? id : '(a malformed id)';
}
