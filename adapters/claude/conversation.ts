// The session, its arrival and each turn recorded with its receipt, for an agent that drives
// the Messages API itself.
import type {
  BetaMessage,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { HostReceiptReport } from '../../src/index.js';
import { joinTextBlocks, receiptReportFromBlocks } from '../../src/rules.js';
import { EngineError } from '../../src/domain/errors.js';
import { requireId } from '../../src/domain/turn.js';
import {
  agentMemoryOf,
  ensureSession,
  storableReply,
  storableText,
  toolLabel,
  type CallOutcome,
  type MemoryTarget,
} from '../agent-memory.js';

import { MAX_ARRIVAL_MESSAGE } from './memory-tool.js';
// ---------------------------------------------------------------------------------------------
// Sessions, the arrival and turns, for an agent on the Messages API

/**
 * A message recall reads at most this much of (the engine's limit), cut on a code point, as the
 * store can take it (a NUL or a lone surrogate shown as U+FFFD).
 */
export function arrivalMessage(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  return storableText(text.slice(0, MAX_ARRIVAL_MESSAGE).replace(/[\uD800-\uDBFF]$/, ''));
}

type ContentBlock = { type: string; [key: string]: unknown };

const blocksOf = (content: unknown): ContentBlock[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content.filter(
          (b): b is ContentBlock =>
            b !== null && typeof b === 'object' && typeof (b as ContentBlock).type === 'string',
        )
      : [];

const TOOL_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** A call's result: `tool_result` (the client's, in a user message) or a server's `*_tool_result`. */
const isResult = (b: ContentBlock): boolean =>
  b.type === 'tool_result' || b.type.endsWith('_tool_result');

/**
 * A result that failed: `is_error` on any result (a client's, an MCP server's), or a server tool's
 * error content (`web_search_tool_result_error`, …).
 */
function failed(b: ContentBlock): boolean {
  if (b.is_error === true) return true;
  const c = b.content as { type?: unknown } | null | undefined;
  return (
    c !== null && typeof c === 'object' && typeof c.type === 'string' && c.type.endsWith('_error')
  );
}

/**
 * A reply as the store keeps it, from the messages the model and the tools added after the user's
 * prompt, or null when it said nothing and ran nothing. Its receipt names the tools its
 * `tool_use`, `server_tool_use` and `mcp_tool_use` blocks called, in order (a call whose result
 * failed is `memory (error)`, one with no result, such as a server call a `pause_turn` or
 * `max_tokens` cut short, is `web_search (no result)`: neither counts as the tool having run), the
 * URLs the results that did not fail and the citations returned, or that no tool ran. Read from
 * the API's blocks, never from the prose; what the store cannot keep (a NUL, a tool named with
 * "]]", an imitated receipt) never costs the reply.
 */
export function replyOf(
  messages: ReadonlyArray<BetaMessageParam | BetaMessage>,
): { content: string; receipt: HostReceiptReport } | null {
  const blocks: ContentBlock[] = [];
  const results = new Map<string, boolean>();
  for (const m of messages) {
    const content = blocksOf(m.content);
    if (m.role === 'assistant') blocks.push(...content);
    for (const b of content) {
      if (isResult(b) && typeof b.tool_use_id === 'string') {
        // a call answered twice failed if either answer did
        results.set(b.tool_use_id, failed(b) || results.get(b.tool_use_id) === true);
      }
    }
  }
  const tools: string[] = [];
  for (const b of blocks) {
    if (!TOOL_BLOCKS.has(b.type)) continue;
    const error = typeof b.id === 'string' ? results.get(b.id) : undefined;
    const outcome: CallOutcome = error === undefined ? 'no result' : error ? 'error' : 'ran';
    tools.push(toolLabel(b.name, outcome));
  }
  // the URLs of results that failed are no sources
  const sources = receiptReportFromBlocks(
    blocks.filter((b) => !(isResult(b) && failed(b))),
  ).sources;
  return storableReply({ text: joinTextBlocks(blocks), tools, sources: sources ?? [] });
}

/** What `memledgerConversation` is bound to. */
export interface ConversationOptions {
  sessionId: string;
  /** The session's title when it is made (default "Claude"). */
  title?: string;
  /** The surface its arrivals are for (default "chat"). */
  surface?: string;
}

/** One session of an agent on the Messages API: its arrival, and its turns with receipts. */
export interface MemledgerConversation {
  readonly sessionId: string;
  /** Makes the session unless it exists. */
  open(): Promise<{ id: string; turnCount: number }>;
  /** The arrival's text (for `system`), recalling for the incoming message when given. */
  arrival(message?: string): Promise<string>;
  /** Records what the user said; its turn number is what the model's citations name. */
  recordUser(text: string): Promise<number>;
  /**
   * Records the reply: the messages the model and its tools added after the prompt (a tool
   * runner's `params.messages` after the prompt). Null when the reply said nothing and ran nothing.
   */
  recordReply(
    messages: ReadonlyArray<BetaMessageParam | BetaMessage>,
  ): Promise<{ seq: number; receipt: HostReceiptReport } | null>;
}

export function memledgerConversation(
  memory: MemoryTarget,
  options: ConversationOptions,
): MemledgerConversation {
  const me = agentMemoryOf(memory);
  const sessionId = requireId(options.sessionId, 'session');
  const surface = options.surface ?? 'chat';
  const open = () => ensureSession(me, sessionId, options.title ?? 'Claude');
  return {
    sessionId,
    open,
    async arrival(message) {
      await open();
      const m = message === undefined ? undefined : arrivalMessage(message);
      return (await me.arrival({ surface, sessionId, ...(m === undefined ? {} : { message: m }) }))
        .text;
    },
    async recordUser(text) {
      await open();
      const r = await me.addTurn({ sessionId, role: 'user', content: storableText(text) });
      if (r.seq === null) throw new EngineError('INTERNAL', 'the user turn was not recorded');
      return r.seq;
    },
    async recordReply(messages) {
      const reply = replyOf(messages);
      if (reply === null) return null;
      await open();
      const r = await me.addTurn({ sessionId, role: 'assistant', ...reply });
      if (r.seq === null) return null;
      return { seq: r.seq, receipt: reply.receipt };
    },
  };
}
