import { EngineError } from '../errors.js';
import type { HostReceiptReport } from '../receipt.js';

/**
 * What every history parser (ChatGPT, Claude, OpenAI messages; Claude Code's transcripts through
 * cli/claude-transcript.ts) turns an export into: conversations of turns, in order, with their
 * real dates, speakers and receipts. Pure data; the engine records it (src/history/history-import.ts).
 */

/** A piece of a turn's text, or the place a tool ran between two pieces (the seam rule joins them). */
export type ImportedBlock = { type: 'text'; text: string } | { type: 'tool' };

export interface ImportedTurn {
  role: 'user' | 'assistant' | 'system';
  /** The text in order; a `tool` block marks where a tool ran between two texts. */
  blocks: ImportedBlock[];
  /** When it was said, as the export records it; undefined when it records none. */
  at: Date | undefined;
  /** Who spoke, when the export names a person behind the role. */
  speaker?: string;
  /** Assistant turns only: what ran in the round; absent is `unknown`. */
  receipt?: HostReceiptReport;
  /** Marked a utility generation by the export (none of the formats marks one today). */
  utility?: boolean;
}

export interface ImportedConversation {
  /** The session id it becomes: `<format>:<the export's id>`, a valid session id. */
  key: string;
  title: string;
  /** When the conversation began, as the export records it. */
  createdAt: Date | undefined;
  turns: ImportedTurn[];
}

export interface SkippedConversation {
  /** The export's id for it, or its position when it has none (`#3`). */
  conversation: string;
  reason: string;
}

export interface HistoryParse {
  conversations: ImportedConversation[];
  skipped: SkippedConversation[];
}

/** The formats `memledger import-history --from` reads. */
export const HISTORY_FORMATS = ['chatgpt', 'claude', 'claude-code', 'openai-messages'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** The text of an assistant turn whose round ran tools but wrote nothing (a turn needs text). */
export const TOOLS_ONLY_TEXT = '(no reply text: this turn only ran tools)';

/** A conversation is malformed: thrown inside a parser, caught per conversation, never past it. */
export class MalformedConversation extends Error {}

export const malformed = (reason: string): MalformedConversation =>
  new MalformedConversation(reason);

/** The export is not the named format at all: nothing of it is imported. */
export const notTheFormat = (format: HistoryFormat, why: string): EngineError =>
  new EngineError('INVALID_ARGUMENT', `this is not a ${format} export: ${why}`, {
    data: { field: 'from' },
  });

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const ID_CHARS = /[^A-Za-z0-9_.:@-]/g;
const MAX_KEY = 128;

/** `<prefix>:<id>` with every character a session id may not hold replaced by `-`. */
export function conversationKey(prefix: string, id: string): string {
  return `${prefix}:${id.replace(ID_CHARS, '-')}`.slice(0, MAX_KEY);
}

const MAX_TITLE = 500;

/** The export's title, one line, or the fallback when it has none. */
export function titleOf(value: unknown, fallback: string): string {
  const title = typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  return (title === '' ? fallback : title).slice(0, MAX_TITLE);
}

/** A date from epoch seconds (ChatGPT) or an ISO string (Claude); undefined when unusable. */
export function dateOf(value: unknown): Date | undefined {
  let at: Date;
  if (typeof value === 'number' && Number.isFinite(value)) at = new Date(value * 1000);
  else if (typeof value === 'string' && value.trim() !== '') at = new Date(value);
  else return undefined;
  const year = at.getUTCFullYear();
  return Number.isNaN(at.getTime()) || year < 1 || year > 9999 ? undefined : at;
}

const MAX_ITEM = 2_048;
const MAX_ITEMS = 1_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A receipt entry the engine accepts (one line, no "]]", no NUL or lone surrogate, within its
 * limit), or null. Claude Code's transcript reader (cli/claude-transcript.ts) uses it too.
 */
export function receiptItem(value: string): string | null {
  const v = value.trim();
  if (v.length === 0 || v.length > MAX_ITEM || /[\r\n]|\]\]/.test(v)) return null;
  return v.includes('\u0000') || LONE_SURROGATE.test(v) ? null : v;
}

/** Every http(s) URL under a `url` key, at most `depth` levels down, into `out`. */
export function collectUrls(value: unknown, out: Set<string>, depth = 8): void {
  if (depth < 0 || out.size >= MAX_ITEMS) return;
  if (Array.isArray(value)) {
    for (const item of value) collectUrls(item, out, depth - 1);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (key === 'url' && typeof v === 'string' && /^https?:\/\//i.test(v)) {
      const item = receiptItem(v);
      if (item !== null) out.add(item);
    } else if (typeof v === 'object') {
      collectUrls(v, out, depth - 1);
    }
  }
}

/**
 * One round of an assistant's work (everything since the person last spoke): the text it wrote,
 * the tools it ran and the URLs they read. Becomes one assistant turn.
 */
export class Round {
  readonly blocks: ImportedBlock[] = [];
  readonly tools: string[] = [];
  readonly sources = new Set<string>();
  at: Date | undefined;

  text(text: string): void {
    if (text.trim().length > 0) this.blocks.push({ type: 'text', text });
  }

  tool(name: unknown): void {
    const item = typeof name === 'string' ? receiptItem(name) : null;
    const label = item ?? 'unnamed_tool';
    if (!this.tools.includes(label) && this.tools.length < MAX_ITEMS) this.tools.push(label);
    this.blocks.push({ type: 'tool' });
  }

  get empty(): boolean {
    return this.tools.length === 0 && this.sources.size === 0 && !this.hasText;
  }

  private get hasText(): boolean {
    return this.blocks.some((b) => b.type === 'text');
  }

  /**
   * The assistant turn, or null when the round holds nothing. `noToolsKnown`: the format shows
   * every tool run, so a round without one is "no tools ran"; otherwise it is `unknown`.
   */
  turn(noToolsKnown: boolean): ImportedTurn | null {
    if (this.empty) return null;
    const sources = [...this.sources].slice(0, MAX_ITEMS);
    // sources with no tool call named: the engine's rule for content blocks too
    const tools = this.tools.length === 0 && sources.length > 0 ? ['unnamed_tool'] : this.tools;
    const receipt: HostReceiptReport | undefined =
      tools.length > 0 ? { tools, sources } : noToolsKnown ? { noTools: true } : undefined;
    const blocks = this.hasText ? this.blocks : [{ type: 'text' as const, text: TOOLS_ONLY_TEXT }];
    return {
      role: 'assistant',
      blocks,
      at: this.at,
      ...(receipt === undefined ? {} : { receipt }),
    };
  }
}

/** Times missing from the export are the previous turn's (or the conversation's start). */
export function fillTimes(turns: ImportedTurn[], start: Date | undefined): void {
  let last = start;
  for (const turn of turns) {
    turn.at ??= last;
    last = turn.at;
  }
}

/** Runs `parse` on each item, collecting what it makes and why an item was skipped. */
export function parseEach(
  items: readonly unknown[],
  idOf: (item: unknown, index: number) => string,
  parse: (item: unknown, index: number) => ImportedConversation | null,
): HistoryParse {
  const out: HistoryParse = { conversations: [], skipped: [] };
  items.forEach((item, i) => {
    const conversation = idOf(item, i);
    try {
      const parsed = parse(item, i);
      if (parsed === null) return;
      if (parsed.turns.length === 0) {
        out.skipped.push({ conversation, reason: 'it holds no turns to import' });
      } else {
        out.conversations.push(parsed);
      }
    } catch (err) {
      if (!(err instanceof MalformedConversation)) throw err;
      out.skipped.push({ conversation, reason: err.message });
    }
  });
  return out;
}
