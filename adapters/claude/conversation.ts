// The session, its arrival and each turn recorded with its receipt, for an agent that drives
// the Messages API itself.
import type {
  BetaMessage,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { HostReceiptReport } from '../../src/index.js';
import { joinTextBlocks, receiptReportFromBlocks } from '../../src/rules.js';
import { EngineError } from '../../src/domain/errors.js';
import { receiptItem } from '../../src/domain/history-import/imported-conversation.js';
import { requireId } from '../../src/domain/turn.js';
import { agentMemoryOf, ensureSession, type MemoryTarget } from '../agent-memory.js';

import { MAX_ARRIVAL_MESSAGE, NO_REPLY_TEXT } from './memory-tool.js';
// ---------------------------------------------------------------------------------------------
// Sessions, the arrival and turns, for an agent on the Messages API

/** A message recall reads at most this much of (the engine's limit), cut on a code point. */
export function arrivalMessage(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  if (text.length <= MAX_ARRIVAL_MESSAGE) return text;
  return text.slice(0, MAX_ARRIVAL_MESSAGE).replace(/[\uD800-\uDBFF]$/, '');
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

const CLIENT_TOOL = 'tool_use';
const TOOL_BLOCKS = new Set([CLIENT_TOOL, 'server_tool_use', 'mcp_tool_use']);

/**
 * A reply's text and receipt, from the messages the model and the tools added after the user's
 * prompt: the tools its tool_use blocks called, in order (a call whose result failed or never came
 * is named so, `memory (error)`, and never counts as the tool having run), the URLs their results
 * and citations returned, or that no tool ran. Read from the API's blocks, never from the prose.
 */
export function replyOf(messages: ReadonlyArray<BetaMessageParam | BetaMessage>): {
  text: string;
  receipt: HostReceiptReport;
} {
  const blocks: ContentBlock[] = [];
  const results = new Map<string, boolean>();
  for (const m of messages) {
    const content = blocksOf(m.content);
    if (m.role === 'assistant') blocks.push(...content);
    else {
      for (const b of content) {
        if (b.type === 'tool_result' && typeof b.tool_use_id === 'string') {
          results.set(b.tool_use_id, b.is_error === true);
        }
      }
    }
  }
  const serverErrors = new Set<string>();
  for (const b of blocks) {
    const c = b.content as { type?: unknown } | null | undefined;
    if (
      b.type.endsWith('_tool_result') &&
      typeof b.tool_use_id === 'string' &&
      typeof c?.type === 'string' &&
      c.type.endsWith('_error')
    ) {
      serverErrors.add(b.tool_use_id);
    }
  }
  const tools: string[] = [];
  for (const b of blocks) {
    if (!TOOL_BLOCKS.has(b.type)) continue;
    const name = (typeof b.name === 'string' ? receiptItem(b.name) : null) ?? 'unnamed_tool';
    const id = typeof b.id === 'string' ? b.id : '';
    let label = name;
    if (b.type === CLIENT_TOOL) {
      const error = results.get(id);
      if (error === undefined) label = `${name} (no result)`;
      else if (error) label = `${name} (error)`;
    } else if (serverErrors.has(id)) label = `${name} (error)`;
    if (!tools.includes(label)) tools.push(label);
  }
  const sources = [...(receiptReportFromBlocks(blocks).sources ?? [])];
  const text = joinTextBlocks(blocks);
  if (tools.length === 0 && sources.length === 0) return { text, receipt: { noTools: true } };
  return { text, receipt: { tools: tools.length === 0 ? ['unnamed_tool'] : tools, sources } };
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
      const r = await me.addTurn({ sessionId, role: 'user', content: text });
      if (r.seq === null) throw new EngineError('INTERNAL', 'the user turn was not recorded');
      return r.seq;
    },
    async recordReply(messages) {
      const reply = replyOf(messages);
      let content = reply.text;
      if (content.trim() === '') {
        if (reply.receipt.noTools === true) return null;
        content = NO_REPLY_TEXT;
      }
      await open();
      const r = await me.addTurn({ sessionId, role: 'assistant', content, receipt: reply.receipt });
      if (r.seq === null) return null;
      return { seq: r.seq, receipt: reply.receipt };
    },
  };
}
