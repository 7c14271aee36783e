import type { HostReceiptReport, ResponseBlock } from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { requireId } from '../src/domain/turn.js';
import { detectUtility } from '../src/domain/utility.js';
import { collectUrls, receiptItem } from '../src/domain/history-import/imported-conversation.js';
import {
  injectedByClaudeCode,
  withoutReminders,
} from '../src/domain/history-import/claude-code-text.js';
import { joinTextBlocks, stripImitatedReceipts } from '../src/faces.js';

/**
 * Claude Code's hook input and transcript, parsed into the turns memledger records. Pure: no
 * engine, no file system. The rule that matters most: a turn with role `user` is evidence the
 * gate accepts quotes from, so only words the person typed become one. Tool output arrives in
 * `user`-type entries too (tool_result blocks), and Claude Code injects its own text there
 * (slash-command wrappers, hook feedback, compact summaries, interruption notices); all of it is
 * left out, and never recorded under another role either (see `LEFT_OUT`).
 */

/** What a Claude Code hook receives on stdin (the fields memledger reads). */
export interface HookInput {
  sessionId: string;
  transcriptPath: string | undefined;
  cwd: string | undefined;
  event: string | undefined;
  /** SessionStart: startup | resume | clear | compact. */
  source: string | undefined;
  /** Stop: the final reply's text, which the transcript may not hold yet when the hook runs. */
  lastAssistantMessage: string | undefined;
}

/** The hook input is small; anything this big is not one. */
const MAX_HOOK_INPUT = 1_048_576;

const optionalText = (doc: Record<string, unknown>, field: string): string | undefined => {
  const value = doc[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new EngineError('INVALID_ARGUMENT', `hook input: "${field}" must be a string`);
  }
  return value;
};

/** Parses the JSON a hook receives; INVALID_ARGUMENT for anything that is not one. */
export function parseHookInput(raw: string): HookInput {
  if (raw.length > MAX_HOOK_INPUT) {
    throw new EngineError('INVALID_ARGUMENT', 'hook input is larger than 1 MiB');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', `hook input is not JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new EngineError('INVALID_ARGUMENT', 'hook input must be a JSON object');
  }
  const fields = doc as Record<string, unknown>;
  const sessionId = optionalText(fields, 'session_id');
  if (sessionId === undefined) {
    throw new EngineError('SESSION_REQUIRED', 'hook input has no "session_id"');
  }
  return {
    sessionId: requireId(sessionId, 'session'),
    transcriptPath: optionalText(fields, 'transcript_path'),
    cwd: optionalText(fields, 'cwd'),
    event: optionalText(fields, 'hook_event_name'),
    source: optionalText(fields, 'source'),
    lastAssistantMessage: optionalText(fields, 'last_assistant_message'),
  };
}

/** One turn to record, in transcript order. */
export type TranscriptTurn =
  | { role: 'user'; content: string; at: Date | undefined }
  | { role: 'assistant'; content: string; receipt: HostReceiptReport; at: Date | undefined };

/** Why transcript entries were left out, counted (each names one kind of entry). */
export const LEFT_OUT = [
  /** `user` entries holding tool_result blocks: tool output, never the person's words. */
  'toolResults',
  /** isMeta, compact summaries, transcript-only entries: written by Claude Code. */
  'meta',
  /** slash-command and bash-mode wrappers, hook feedback, interruption notices, reminders. */
  'injected',
  /** subagent (sidechain) entries: another conversation. */
  'sidechain',
  /** assistant entries Claude Code wrote itself (API errors: model "<synthetic>"). */
  'synthetic',
  /** utility generations (`__title__`, `__insight__`): never conversation. */
  'utility',
  /** entries of other types (summary, system, attachment, progress, snapshots…). */
  'other',
] as const;
export type LeftOutKind = (typeof LEFT_OUT)[number];

export interface TranscriptParse {
  turns: TranscriptTurn[];
  /** Lines that are not JSON objects (a torn or corrupted line): skipped, never fatal. */
  malformed: number;
  leftOut: Record<LeftOutKind, number>;
  /**
   * The last reply is not in the transcript completely yet (Claude Code can run the Stop hook
   * before it flushes the final message): it is held back, and a later run records it.
   */
  heldBack: boolean;
}

/** docs/API.md, Input limits: a turn's text and a receipt's entries. */
const MAX_TURN_TEXT = 1_000_000;
const MAX_RECEIPT_ITEMS = 1_000;
const TRUNCATED = '\n[… cut by memledger: the turn was longer than 1,000,000 characters]';
/** The text of an assistant turn whose reply ran tools but said nothing (a turn needs text). */
export const NO_REPLY_TEXT = '(no reply text: this turn only ran tools)';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
const NUL = String.fromCharCode(0);
const CLIENT_TOOL = 'tool_use';
const TOOL_BLOCKS = new Set([CLIENT_TOOL, 'server_tool_use', 'mcp_tool_use']);

type Entry = Record<string, unknown>;

const isObject = (v: unknown): v is Entry =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Text the store can keep: no NUL, no lone surrogate, at most the turn limit. */
function storable(text: string): string {
  const clean = text.split(NUL).join('\uFFFD').replace(LONE_SURROGATES, '\uFFFD');
  if (clean.length <= MAX_TURN_TEXT) return clean;
  // the cut may split a surrogate pair
  const cut = clean.slice(0, MAX_TURN_TEXT - TRUNCATED.length) + TRUNCATED;
  return cut.replace(LONE_SURROGATES, '\uFFFD');
}

function timestamp(entry: Entry): Date | undefined {
  const raw = entry.timestamp;
  if (typeof raw !== 'string') return undefined;
  const at = new Date(raw);
  const year = at.getUTCFullYear();
  return Number.isNaN(at.getTime()) || year < 1 || year > 9999 ? undefined : at;
}

function blocksOf(message: Entry): ResponseBlock[] {
  const content = message.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(
    (b): b is ResponseBlock => isObject(b) && typeof b.type === 'string',
  ) as ResponseBlock[];
}

/** A reply: the assistant messages (tool rounds) between two things the person or Claude Code said. */
interface Reply {
  messages: Array<{ id: string; blocks: ResponseBlock[] }>;
  results: Map<string, { error: boolean; sources: Set<string> }>;
  at: Date | undefined;
  /** The prompt it answers was a utility request: the reply is one too. */
  utility: boolean;
}

const hasClientToolUse = (blocks: readonly ResponseBlock[]): boolean =>
  blocks.some((b) => b.type === CLIENT_TOOL);

/** Tools in call order; a call whose result failed or never came is named so (not a did receipt). */
function receiptOf(reply: Reply, blocks: readonly ResponseBlock[]): HostReceiptReport {
  const tools: string[] = [];
  const sources = new Set<string>();
  const serverErrors = new Set<string>();
  for (const b of blocks) {
    if (b.type.endsWith('_tool_result')) {
      const content = (b as { content?: unknown }).content;
      const id = (b as { tool_use_id?: unknown }).tool_use_id;
      if (
        isObject(content) &&
        typeof content.type === 'string' &&
        content.type.endsWith('_error')
      ) {
        if (typeof id === 'string') serverErrors.add(id);
      } else {
        collectUrls(content, sources);
      }
    } else if (b.type === 'text') {
      collectUrls((b as { citations?: unknown }).citations, sources);
    }
  }
  for (const b of blocks) {
    if (!TOOL_BLOCKS.has(b.type)) continue;
    const rawName = (b as { name?: unknown }).name;
    const name = (typeof rawName === 'string' ? receiptItem(rawName) : null) ?? 'unnamed_tool';
    const id = (b as { id?: unknown }).id;
    let label = name;
    if (b.type === CLIENT_TOOL) {
      const result = typeof id === 'string' ? reply.results.get(id) : undefined;
      if (result === undefined) label = `${name} (no result)`;
      else if (result.error) label = `${name} (error)`;
      else for (const s of result.sources) sources.add(s);
    } else if (typeof id === 'string' && serverErrors.has(id)) {
      label = `${name} (error)`;
    }
    if (!tools.includes(label) && tools.length < MAX_RECEIPT_ITEMS) tools.push(label);
  }
  const sourceList = [...sources].slice(0, MAX_RECEIPT_ITEMS);
  if (tools.length === 0 && sourceList.length === 0) return { noTools: true };
  // Citations with no tool call: the engine's rule for blocks (receiptReportFromBlocks) too.
  return { tools: tools.length === 0 ? ['unnamed_tool'] : tools, sources: sourceList };
}

/** The assistant turn a reply becomes, or null when it holds nothing to record. */
function replyTurn(reply: Reply): TranscriptTurn | null {
  const blocks = reply.messages.flatMap((m) => m.blocks);
  const receipt = receiptOf(reply, blocks);
  let content = stripImitatedReceipts(storable(joinTextBlocks(blocks))).text;
  if (content.trim().length === 0) {
    if (receipt.noTools === true) return null;
    content = NO_REPLY_TEXT;
  }
  return { role: 'assistant', content, receipt, at: reply.at };
}

const squash = (s: string): string => s.replace(/\s+/g, '');

/**
 * Whether the last reply is all there: its last message ran no client tool, it said something,
 * and, when the hook input carries the final reply's text, that text is the reply's ending.
 */
function replyComplete(reply: Reply, lastAssistantMessage: string | undefined): boolean {
  const last = reply.messages.at(-1);
  if (last === undefined || hasClientToolUse(last.blocks)) return false;
  const text = squash(joinTextBlocks(last.blocks));
  if (text.length === 0) return false;
  if (lastAssistantMessage === undefined || squash(lastAssistantMessage).length === 0) return true;
  return text.endsWith(squash(lastAssistantMessage));
}

/** The text of a `user` entry, or why it is not the person's words. */
function userText(entry: Entry, message: Entry): { text: string } | { leftOut: LeftOutKind } {
  const blocks = blocksOf(message);
  if (blocks.some((b) => b.type === 'tool_result') || entry.toolUseResult !== undefined) {
    return { leftOut: 'toolResults' };
  }
  if (entry.isMeta === true || entry.isCompactSummary === true) return { leftOut: 'meta' };
  if (entry.isVisibleInTranscriptOnly === true) return { leftOut: 'meta' };
  const raw = joinTextBlocks(blocks.filter((b) => b.type === 'text'));
  if (injectedByClaudeCode(raw)) return { leftOut: 'injected' };
  const text = withoutReminders(raw).trim();
  if (text.length === 0) return { leftOut: 'injected' };
  return { text: storable(text) };
}

export interface ParseTranscriptOptions {
  /** The Stop hook's `last_assistant_message`: tells a complete last reply from a stale one. */
  lastAssistantMessage?: string | undefined;
}

/**
 * Parses a transcript (JSONL) into turns in order. Deterministic and prefix-stable: the turns of
 * a transcript are a prefix of the turns of the same transcript with more lines appended, which
 * is what lets the hook record "the turns beyond what the session holds" by count. A reply
 * becomes one assistant turn (all its tool rounds joined, its receipt from every tool call);
 * it ends at the next thing the person or Claude Code said, or when a message that ran no tool
 * is followed by another message.
 */
export function parseTranscript(
  text: string,
  options: ParseTranscriptOptions = {},
): TranscriptParse {
  const out = new TranscriptReader();
  for (const line of text.replace(/^\uFEFF/, '').split('\n')) {
    if (line.trim().length > 0) out.line(line);
  }
  return out.finish(options.lastAssistantMessage);
}

/** Reads entries in order, keeping the reply that is still open. */
class TranscriptReader {
  private readonly turns: TranscriptTurn[] = [];
  private readonly leftOut = Object.fromEntries(LEFT_OUT.map((k) => [k, 0])) as Record<
    LeftOutKind,
    number
  >;
  private malformed = 0;
  private reply: Reply | null = null;
  /** The last prompt was a utility request: what answers it is one too. */
  private utilityPrompt = false;

  line(line: string): void {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      this.malformed += 1;
      return;
    }
    if (!isObject(entry) || typeof entry.type !== 'string') {
      this.malformed += 1;
      return;
    }
    const message = entry.message;
    if (entry.isSidechain === true) this.leftOut.sidechain += 1;
    else if (entry.type === 'assistant' && isObject(message)) this.assistant(entry, message);
    else if (entry.type === 'user' && isObject(message)) this.user(entry, message);
    else this.leftOut.other += 1;
  }

  finish(lastAssistantMessage: string | undefined): TranscriptParse {
    let heldBack = false;
    if (this.reply !== null) {
      if (replyComplete(this.reply, lastAssistantMessage)) this.close();
      else heldBack = true;
    }
    return { turns: this.turns, malformed: this.malformed, leftOut: this.leftOut, heldBack };
  }

  private assistant(entry: Entry, message: Entry): void {
    if (message.model === '<synthetic>' || entry.isApiErrorMessage === true) {
      this.leftOut.synthetic += 1;
      return;
    }
    const id = typeof message.id === 'string' ? message.id : String(entry.uuid ?? '');
    const blocks = blocksOf(message);
    const same = this.reply?.messages.find((m) => m.id === id && id !== '');
    if (same !== undefined) {
      // One API message written over several lines (one content block each).
      same.blocks.push(...blocks);
    } else {
      const last = this.reply?.messages.at(-1);
      // A message that ran no tool ended the reply; another message is a new generation.
      if (last !== undefined && !hasClientToolUse(last.blocks)) this.close();
      this.reply ??= {
        messages: [],
        results: new Map(),
        at: undefined,
        utility: this.utilityPrompt,
      };
      this.reply.messages.push({ id, blocks });
    }
    if (this.reply !== null) this.reply.at = timestamp(entry) ?? this.reply.at;
  }

  private user(entry: Entry, message: Entry): void {
    const said = userText(entry, message);
    if ('leftOut' in said) {
      this.leftOut[said.leftOut] += 1;
      if (said.leftOut === 'toolResults') {
        if (this.reply !== null) recordResults(this.reply, entry, message);
      } else {
        // Claude Code said something: whatever the model writes next is another reply.
        this.close();
        this.utilityPrompt = false;
      }
      return;
    }
    this.close();
    this.utilityPrompt = detectUtility(said.text, false) !== null;
    if (this.utilityPrompt) this.leftOut.utility += 1;
    else this.turns.push({ role: 'user', content: said.text, at: timestamp(entry) });
  }

  private close(): void {
    const reply = this.reply;
    if (reply === null) return;
    this.reply = null;
    const turn = replyTurn(reply);
    if (reply.utility || (turn !== null && detectUtility(turn.content, false) !== null)) {
      this.leftOut.utility += 1;
    } else if (turn !== null) {
      this.turns.push(turn);
    }
  }
}

/** A tool_result entry: which calls of the open reply answered, failed, and what they read. */
function recordResults(reply: Reply, entry: Entry, message: Entry): void {
  const results = blocksOf(message).filter((b) => b.type === 'tool_result');
  for (const block of results) {
    const id = (block as { tool_use_id?: unknown }).tool_use_id;
    if (typeof id !== 'string') continue;
    const error = (block as { is_error?: unknown }).is_error === true;
    const sources = new Set<string>();
    // toolUseResult is Claude Code's structured copy of one result (WebFetch's url,
    // WebSearch's results); with several results in one entry it cannot be attributed.
    if (!error && results.length === 1) collectUrls(entry.toolUseResult, sources);
    reply.results.set(id, { error, sources });
  }
}
