// `memledger/openai-agents`: memledger in the OpenAI Agents SDK (@openai/agents 0.20).
//
//   const session = memledgerSession(me, { sessionId: 'chat-1' });
//   const agent = new Agent({ name: 'Assistant', tools: memledgerTools(me, { sessionId: 'chat-1' }) });
//   await run(agent, text, { session, sessionInputCallback: session.withArrival });
//
// The session is the SDK's `Session` over a memledger session: the history it gives back is the
// recorded turns; what the runner hands it to keep becomes turns (the user's messages as user
// turns, each reply as one assistant turn whose receipt is read from the run's own tool items,
// never from the reply's prose). Its input callback puts the arrival in front of the history, so
// memory is in context before the first token, and records the user's message before the model
// runs. The tools recall and propose through the gate. Nothing here approves, decides or
// forgets: popItem and clearSession are refused. A failed memory read (the arrival) lets the run
// go on, saying so; a failed write fails the run with memledger's code.
import type { AgentInputItem, FunctionTool, Session, SessionInputCallback } from '@openai/agents';
import { tool } from '@openai/agents';
import { z } from 'zod';
import type {
  HostReceiptReport,
  Proposal,
  Receipt,
  RecallKind,
  ResponseBlock,
} from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { FACT_ORIGINS } from '../src/domain/fact.js';
import { forgottenLine } from '../src/domain/turn.js';
import { collectUrls } from '../src/domain/history-import/imported-conversation.js';
import {
  joinTextBlocks,
  quoteFoundIn,
  renderProposeAnswer,
  recallForModel,
  renderReceiptLine,
  requireId,
  shownText,
} from '../src/rules.js';
import { ServerError } from '../server/server-errors.js';
import {
  agentMemoryOf,
  ensureSession,
  storableReply,
  storableText,
  toolLabel,
  type AgentMemory,
  type CallOutcome,
  type MemoryTarget,
  type MemoryTurn,
} from './agent-memory.js';

/** Where in the session a memory failure happened that the run went on without. */
export type MemoryStage = 'arrival';

/** How a memledger session reads and records. */
export interface MemledgerSessionOptions {
  /** The memledger session this conversation is recorded in (made on first use). */
  sessionId: string;
  /** The session's title when the adapter makes it (default `OpenAI Agents`). */
  title?: string;
  /** The arrival's surface (default `chat`). */
  surface?: string;
  /**
   * Told when the arrival could not be read; the run goes on with a note in its place (default: a
   * process warning naming memledger's error code).
   */
  onError?: (error: unknown, stage: MemoryStage) => void;
}

/** The SDK's `Session` over a memledger session, with the arrival as its input callback. */
export interface MemledgerSession extends Session {
  /** The memledger session id. */
  readonly sessionId: string;
  /**
   * The run's `sessionInputCallback`: the arrival (recalled for the new user message) as a
   * system item in front of the history, never recorded (`addItems` records no system item).
   * It records the new user message at once, so the run's own tools can cite it; when the
   * runner hands it back after the run it is not recorded again.
   */
  readonly withArrival: SessionInputCallback;
  /** Whether a reply's tool calls wait for their end (a later batch) before it is recorded. */
  readonly holding: boolean;
}

/** What the model is told when the arrival could not be read: never that nothing is on record. */
export const ARRIVAL_UNAVAILABLE =
  '[Memory (memledger)] Memory could not be read this turn: what I know, and what was said before, may be on record even though it is not shown here. Do not assume nothing is on record.';

/** How a memledger tool's failure begins (the receipt names such a call `name (error)`). */
export const TOOL_FAILED = 'memledger could not run this tool:';

/** The SDK's own failure texts in a tool result: the call failed, whatever ran. */
const FAILED_RESULT = [
  /^An error occurred while running the tool\./,
  /^Tool execution was not approved\./,
  /^Tool '[^']*' (?:not found|timed out after \d+ms)\./,
  new RegExp(`^${TOOL_FAILED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
];

/** The longest user message the arrival recalls for (its bound; the turn is recorded whole). */
const MESSAGE_CHARS = 20_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function defaultOnError(error: unknown, stage: MemoryStage): void {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  process.emitWarning(
    `memledger (${stage}): ${typeof code === 'string' ? `${code}: ` : ''}${message}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Items: what the SDK hands the session, read as turns

/** The text of a message's content: a string, or its text parts joined. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const blocks: ResponseBlock[] = content.filter(isObject).map((part) => {
    if (
      (part.type === 'input_text' || part.type === 'output_text') &&
      typeof part.text === 'string'
    )
      return { type: 'text', text: part.text };
    if (part.type === 'refusal' && typeof part.refusal === 'string')
      return { type: 'text', text: part.refusal };
    return { type: String(part.type) };
  });
  return joinTextBlocks(blocks);
}

/** The user's words in a user message, as the store keeps them; null when it holds none. */
function userText(item: Json): string | null {
  const text = storableText(messageText(item.content));
  return text.trim().length > 0 ? text : null;
}

/** The text of a tool result's output (a string, a text part, or parts). */
function outputText(output: unknown): string | null {
  if (typeof output === 'string') return output;
  if (isObject(output) && output.type === 'text' && typeof output.text === 'string')
    return output.text;
  if (Array.isArray(output)) {
    const texts = output
      .filter(isObject)
      .map((p) => (typeof p.text === 'string' ? p.text : null))
      .filter((t): t is string => t !== null);
    return texts.length === 0 ? null : texts.join('\n');
  }
  return null;
}

/** The http(s) URLs under a `url` key in a tool's output (JSON text is read as JSON). */
function outputUrls(output: unknown, into: Set<string>): void {
  collectUrls(output, into);
  const text = outputText(output);
  if (text === null) return;
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return;
  try {
    collectUrls(JSON.parse(trimmed) as unknown, into);
  } catch {
    // not JSON: a plain text result names no source
  }
}

/** Whether a tool result says the call failed (its status, or the SDK's own failure text). */
function resultFailed(item: Json): boolean {
  if (item.status === 'incomplete' || item.status === 'failed') return true;
  const text = outputText(item.output);
  return text !== null && FAILED_RESULT.some((re) => re.test(text.trimStart()));
}

/** A tool call and the item that answers it, per item type (a hosted call answers itself). */
const CALL_TYPES: Record<string, { name: (item: Json) => unknown; result: string }> = {
  function_call: {
    name: (i) =>
      typeof i.namespace === 'string' && i.namespace !== ''
        ? `${i.namespace}.${String(i.name)}`
        : i.name,
    result: 'function_call_result',
  },
  computer_call: { name: () => 'computer', result: 'computer_call_result' },
  shell_call: { name: () => 'shell', result: 'shell_call_output' },
  apply_patch_call: { name: () => 'apply_patch', result: 'apply_patch_call_output' },
  program: { name: () => 'program', result: 'program_output' },
};
const RESULT_TYPES = new Set(Object.values(CALL_TYPES).map((c) => c.result));
const SELF_ANSWERED = new Set(['hosted_tool_call', 'tool_search_call']);

const callIdOf = (item: Json): string | null => {
  const id = item.callId ?? item.call_id;
  return typeof id === 'string' && id !== '' ? id : null;
};

/** One reply of the assistant: everything it said and ran since the user last spoke. */
class Reply {
  readonly blocks: ResponseBlock[] = [];
  /** Calls in order, named as given; `self`: the provider ran and answered it (a hosted tool). */
  private readonly calls: Array<{
    id: string | null;
    name: unknown;
    failed: boolean;
    self: boolean;
  }> = [];
  private readonly results = new Map<string, { failed: boolean }>();
  /** Sources in the order they came back: a call's only once it returned without failing. */
  private readonly sources = new Set<string>();
  /** The last item was an assistant message (not a tool call or result). */
  endsInText = false;

  get empty(): boolean {
    return this.blocks.length === 0;
  }

  /** Every client call has its result. */
  get settled(): boolean {
    return this.calls.every((c) => c.self || (c.id !== null && this.results.has(c.id)));
  }

  message(item: Json): void {
    this.blocks.push({ type: 'text', text: messageText(item.content) });
    // a model's own citations (web search it ran itself): sources, as the hook reads them
    if (Array.isArray(item.content)) {
      for (const part of item.content.filter(isObject)) {
        const annotations =
          part.annotations ??
          (isObject(part.providerData) ? part.providerData.annotations : undefined);
        collectUrls(annotations, this.sources);
      }
    }
    this.endsInText = true;
  }

  call(item: Json, name: unknown): void {
    this.calls.push({ id: callIdOf(item), name, failed: false, self: false });
    this.blocks.push({ type: 'tool' });
    this.endsInText = false;
  }

  /** A call the provider ran and answered in one item (web search, file search, hosted MCP…). */
  hosted(item: Json): void {
    const name = item.type === 'tool_search_call' ? 'tool_search' : item.name;
    const data = isObject(item.providerData) ? item.providerData : {};
    const status = item.status ?? data.status;
    const failed =
      status === 'failed' ||
      status === 'incomplete' ||
      (data.error !== undefined && data.error !== null);
    if (!failed) {
      outputUrls(item.output, this.sources);
      collectUrls(data, this.sources);
    }
    this.calls.push({ id: null, name, failed, self: true });
    this.blocks.push({ type: 'tool' });
    this.endsInText = false;
  }

  result(item: Json): void {
    this.endsInText = false;
    const id = callIdOf(item);
    const failed = resultFailed(item);
    // a result answers a call of this reply, or nothing it could cite
    if (id === null || !this.calls.some((c) => c.id === id)) return;
    this.results.set(id, { failed });
    if (!failed) outputUrls(item.output, this.sources);
  }

  /** How a call ended: a failed one or one without result is named so (`toolLabel`). */
  private outcome(c: { id: string | null; failed: boolean; self: boolean }): CallOutcome {
    if (c.self) return c.failed ? 'error' : 'ran';
    const r = c.id === null ? undefined : this.results.get(c.id);
    return r === undefined ? 'no result' : r.failed ? 'error' : 'ran';
  }

  /**
   * The assistant turn it becomes, or null when it holds nothing to record (`storableReply`): its
   * text (a receipt it imitates cut), or, when it said nothing but ran tools, what says so; its
   * receipt, tools in call order and the sources they returned, or "no tools ran".
   */
  turn(): PendingTurn | null {
    const reply = storableReply({
      text: joinTextBlocks(this.blocks),
      tools: this.calls.map((c) => toolLabel(c.name, this.outcome(c))),
      sources: this.sources,
    });
    return reply === null ? null : { role: 'assistant', ...reply };
  }
}

/** A turn the session will record, in order. */
type PendingTurn =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; receipt: HostReceiptReport };

// ---------------------------------------------------------------------------------------------
// Turns: what the session gives back, as items

/** A turn's receipt as both faces send it (the engine's Turn, the HTTP API's entity). */
function receiptOfTurn(turn: MemoryTurn): Receipt | null {
  const r = (turn as { receipt?: unknown }).receipt;
  if (!isObject(r)) return null;
  if (r.kind === 'none' || r.kind === 'unknown') return { kind: r.kind };
  const strings = (v: unknown): v is string[] =>
    Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (r.kind === 'tools' && strings(r.tools) && strings(r.sources))
    return { kind: 'tools', tools: r.tools, sources: r.sources };
  return null;
}

/** A tombstone's line, when the turn was forgotten (its words are gone). */
function forgottenOf(turn: MemoryTurn): string | null {
  const f = (turn as { forgotten?: unknown }).forgotten;
  if (isObject(f)) {
    const at = f.at instanceof Date ? f.at : new Date(String(f.at));
    const by = f.by === 'request' || f.by === 'retention' || f.by === 'owner' ? f.by : 'owner';
    if (!Number.isNaN(at.getTime())) return forgottenLine({ seq: turn.seq, forgotten: { at, by } });
  }
  // a face that does not send the tombstone's marker: a recorded turn is never empty
  return turn.content === '' ? `[turn ${turn.seq}: forgotten]` : null;
}

const systemItem = (content: string): AgentInputItem => ({
  type: 'message',
  role: 'system',
  content,
});

/**
 * A recorded turn as the SDK's items: the message (its text as recorded, shown as memledger shows
 * stored text to a model: receipt markers defanged, unseen characters as code points), and for an
 * assistant turn its receipt as memledger's own system line after it, never inside the reply.
 * Only user and assistant turns are given back: a `tool` or `system` turn anyone with a token
 * recorded in the session is never promoted to a system item (nor given back at all), so no
 * stored turn gains the authority of the app's own instructions on a later run.
 */
function itemsOfTurn(turn: MemoryTurn): AgentInputItem[] {
  if (turn.role !== 'user' && turn.role !== 'assistant') return [];
  const gone = forgottenOf(turn);
  if (gone !== null) return [systemItem(gone)];
  const text = shownText(turn.content, 'lines');
  if (turn.role === 'user') return [{ type: 'message', role: 'user', content: text }];
  const items: AgentInputItem[] = [
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    },
  ];
  const receipt = receiptOfTurn(turn);
  if (receipt !== null) items.push(systemItem(renderReceiptLine(receipt)));
  return items;
}

// ---------------------------------------------------------------------------------------------
// The session

/**
 * The OpenAI Agents SDK's `Session` over a memledger session. `getItems` gives back the recorded
 * turns; `addItems` records the user's messages and each reply with its receipt; `withArrival`
 * is the run's `sessionInputCallback`. `popItem` and `clearSession` are refused: memledger never
 * deletes history on an agent's word (forgetting is the owner's, `memledger forget`).
 */
export function memledgerSession(
  target: MemoryTarget,
  options: MemledgerSessionOptions,
): MemledgerSession {
  const memory = agentMemoryOf(target);
  if (!isObject(options)) {
    throw new EngineError('INVALID_ARGUMENT', 'options must be an object with a sessionId', {
      data: { field: 'options' },
    });
  }
  const sessionId = requireId(options.sessionId, 'session');
  const surface = options.surface ?? 'chat';
  const title = options.title ?? 'OpenAI Agents';
  const onError = options.onError ?? defaultOnError;

  let made: Promise<void> | null = null;
  const ensure = (): Promise<void> => {
    made ??= ensureSession(memory, sessionId, title)
      .then(() => undefined)
      .catch((err: unknown) => {
        made = null;
        throw err;
      });
    return made;
  };

  // a reply whose tool calls have not all ended, or that ends in a tool: waits for its end
  let held: Reply | null = null;
  // the user's words the arrival recorded before the run, which the runner hands back after it
  let early: string[] = [];
  // writes in order, one batch after the other
  let writes: Promise<void> = Promise.resolve();

  function enqueue(turns: readonly PendingTurn[]): Promise<void> {
    const write = writes.then(async () => {
      await ensure();
      for (const t of turns) {
        await memory.addTurn({
          sessionId,
          role: t.role,
          content: t.content,
          ...(t.role === 'assistant' ? { receipt: t.receipt } : {}),
        });
      }
    });
    writes = write.catch(() => undefined);
    return write;
  }

  const replyTurn = (reply: Reply): PendingTurn[] => {
    const t = reply.turn();
    return t === null ? [] : [t];
  };

  function readBatch(items: readonly unknown[]): PendingTurn[] {
    const turns: PendingTurn[] = [];
    let reply = held ?? new Reply();
    const close = () => {
      turns.push(...replyTurn(reply));
      reply = new Reply();
    };
    for (const raw of items) {
      if (!isObject(raw)) continue;
      const type = raw.type ?? 'message';
      if (type === 'message' && raw.role === 'user') {
        close();
        const text = userText(raw);
        if (text === null) continue;
        // recorded already, when it arrived
        if (early[0] === text) early.shift();
        else {
          early = [];
          turns.push({ role: 'user', content: text });
        }
      } else if (type === 'message' && raw.role === 'assistant') {
        reply.message(raw);
      } else if (typeof type === 'string' && type in CALL_TYPES) {
        reply.call(raw, (CALL_TYPES[type] as (typeof CALL_TYPES)[string]).name(raw));
      } else if (typeof type === 'string' && RESULT_TYPES.has(type)) {
        reply.result(raw);
      } else if (typeof type === 'string' && SELF_ANSWERED.has(type)) {
        reply.hosted(raw);
      }
      // system and developer messages (the arrival among them), reasoning, compaction markers
      // and unknown items are not the user's words nor the reply: never recorded
    }
    // a reply is whole when it ends in what the assistant said, every call answered; one that
    // ends in a tool (a run stopped at a tool, a call awaiting approval) waits for its end, or
    // for the user's next message
    if (reply.endsInText && reply.settled) {
      close();
      held = null;
    } else {
      held = reply.empty ? null : reply;
    }
    return turns;
  }

  const withArrival: SessionInputCallback = async (history, newItems) => {
    const texts = (newItems as unknown[])
      .filter(
        (i): i is Json => isObject(i) && (i.type ?? 'message') === 'message' && i.role === 'user',
      )
      .map(userText)
      .filter((t): t is string => t !== null);
    const message = storableText(texts.join('\n').slice(0, MESSAGE_CHARS));
    let arrival: string;
    try {
      await ensure();
      const a = await memory.arrival({
        surface,
        sessionId,
        ...(message.trim().length > 0 ? { message } : {}),
      });
      arrival = a.text;
    } catch (err) {
      onError(err, 'arrival');
      arrival = ARRIVAL_UNAVAILABLE;
    }
    // The user's words are recorded now, before the model answers, so that a tool the model runs
    // in this run (propose_memories) can cite them; the runner hands them back after the run, and
    // they are not recorded twice. A reply still waiting for its tools ends here, before them.
    const turns = held === null ? [] : replyTurn(held);
    held = null;
    turns.push(...texts.map((content) => ({ role: 'user' as const, content })));
    early = [...texts];
    await enqueue(turns);
    return [systemItem(arrival), ...history, ...newItems];
  };

  const refusal = (what: string): ServerError =>
    new ServerError(
      'ROLE_FORBIDDEN',
      `${what}: memledger never deletes history on an agent's word. Forgetting is the owner's: \`memledger forget\` (or the review page); the agent may only file a request.`,
      { data: { sessionId } },
    );

  return {
    sessionId,
    withArrival,
    get holding() {
      return held !== null;
    },
    async getSessionId() {
      await ensure();
      return sessionId;
    },
    async getItems(limit?: number) {
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
        throw new EngineError('INVALID_ARGUMENT', 'limit must be a whole number of at least 0', {
          data: { field: 'limit' },
        });
      }
      if (limit === 0) return [];
      await ensure();
      const turns = await memory.turns(sessionId, limit);
      const items = turns.flatMap(itemsOfTurn);
      return limit === undefined ? items : items.slice(-limit);
    },
    addItems(items: AgentInputItem[]) {
      if (!Array.isArray(items)) {
        return Promise.reject(
          new EngineError('INVALID_ARGUMENT', 'addItems takes a list of items', {
            data: { field: 'items' },
          }),
        );
      }
      return enqueue(readBatch(items));
    },
    popItem() {
      return Promise.reject(refusal('popItem is refused'));
    },
    clearSession() {
      return Promise.reject(refusal('clearSession is refused'));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The tools

/** Which session the tools propose from. */
export interface MemledgerToolsOptions {
  /** The memledger session of this conversation: proposals cite its turns, and only its. */
  sessionId: string;
}

// Strict function tools: every field is required, "absent" is null.
const proposalInput = z.object({
  slot: z.string().describe('what_i_know_about_user, stances, corrections_received, …'),
  key: z.string().nullable().describe('a key within the slot, or null'),
  text: z.string().describe('the memory, one line (at most 2,000 characters)'),
  origin: z.enum(FACT_ORIGINS).describe('did, saw, inferred or summarized'),
  evidence: z
    .object({
      turn: z
        .number()
        .int()
        .nullable()
        .describe(
          'the cited turn’s number in this session, or null: the latest user turn holding the quote (for did: the latest reply whose receipt names the tool)',
        ),
      quote: z.string().nullable().describe('the user’s own words, exactly as in that turn'),
      tool: z.string().nullable().describe('for origin did: the tool on that turn’s receipt'),
    })
    .nullable(),
  validFrom: z.string().nullable().describe('ISO date the memory holds from, or null'),
  validTo: z.string().nullable().describe('ISO date the memory holds until, or null'),
});
type ProposalInput = z.infer<typeof proposalInput>;

const recallInput = z.object({
  query: z.string().describe('what to look for, in words'),
  k: z.number().int().nullable().describe('how many items at most (default 10), or null'),
  kinds: z
    .array(z.enum(['turn', 'fact'] as const satisfies readonly RecallKind[]))
    .nullable()
    .describe('only recorded turns, or only live facts; null for both'),
});

/** What a tool answers when memory refused or failed: the code, never an empty answer. */
function failed(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return `${TOOL_FAILED} ${typeof code === 'string' ? `${code}: ` : ''}${shownText(message)}`;
}

/**
 * The turn a proposal without a turn number cites: the latest user turn of the session holding
 * its quote (the latest user turn when none does, so the gate says the quote is not there), or,
 * for a tool, the latest reply whose receipt names it. The gate judges the citation all the same.
 */
function citedSeq(
  turns: readonly MemoryTurn[],
  evidence: { quote: string | null; tool: string | null },
  origin: string,
): number | undefined {
  const newestFirst = [...turns].reverse();
  if (origin === 'did' || (evidence.tool !== null && evidence.quote === null)) {
    const replies = newestFirst.filter((t) => t.role === 'assistant');
    const tool = evidence.tool?.trim();
    const ran = replies.find((t) => {
      const r = receiptOfTurn(t);
      return tool !== undefined && r?.kind === 'tools' && r.tools.includes(tool);
    });
    return (ran ?? replies[0])?.seq;
  }
  const users = newestFirst.filter((t) => t.role === 'user');
  const quote = evidence.quote;
  const holding = quote === null ? undefined : users.find((t) => quoteFoundIn(quote, t.content));
  return (holding ?? users[0])?.seq;
}

function proposalOf(p: ProposalInput, seq: number | undefined): Proposal {
  const e = p.evidence;
  const turn = e?.turn ?? seq;
  return {
    slot: p.slot,
    text: p.text,
    origin: p.origin,
    ...(p.key === null ? {} : { key: p.key }),
    ...(e === null
      ? {}
      : {
          evidence: {
            ...(turn === undefined ? {} : { turn }),
            ...(e.quote === null ? {} : { quote: e.quote }),
            ...(e.tool === null ? {} : { tool: e.tool }),
          },
        }),
    ...(p.validFrom === null ? {} : { validFrom: p.validFrom }),
    ...(p.validTo === null ? {} : { validTo: p.validTo }),
  };
}

/**
 * memledger's tools for an OpenAI Agents SDK agent: `recall` (turns and live facts, each with its
 * passport) and `propose_memories` (through the gate: what passes waits in the owner's pile, never
 * live). They answer what memledger's MCP tools answer. No tool approves, decides or forgets.
 */
export function memledgerTools(
  target: MemoryTarget,
  options: MemledgerToolsOptions,
): [
  FunctionTool<unknown, typeof recallInput, string>,
  FunctionTool<unknown, z.ZodObject<{ proposals: z.ZodArray<typeof proposalInput> }>, string>,
] {
  const memory: AgentMemory = agentMemoryOf(target);
  const sessionId = requireId(options?.sessionId, 'session');
  const recall = tool({
    name: 'recall',
    description:
      'Searches this user’s recorded conversations and live memory, each item with its passport (origin, date, evidence, receipt). Reads only. An empty answer says what was searched; when every kind and session was searched, no record exists: say so.',
    parameters: recallInput,
    async execute(input) {
      try {
        const { text } = await recallForModel((q, o) => memory.recall(q, o), input.query, {
          ...(input.k === null ? {} : { k: input.k }),
          ...(input.kinds === null ? {} : { kinds: input.kinds }),
        });
        return text;
      } catch (err) {
        return failed(err);
      }
    },
  });
  const propose = tool({
    name: 'propose_memories',
    description:
      'Proposes memories from this conversation. Each must quote the user’s own words from a user turn of this conversation (evidence.quote; evidence.turn may be null), or, for origin did, cite a tool on a reply’s receipt. What passes waits for the owner’s review, not live; what fails is dropped with a code and a reason. Nothing proposed becomes live through any tool.',
    parameters: z.object({ proposals: z.array(proposalInput) }),
    async execute(input) {
      try {
        const needsTurns = input.proposals.some(
          (p) => p.evidence !== null && p.evidence.turn === null,
        );
        const turns = needsTurns ? await memory.turns(sessionId) : [];
        const proposals = input.proposals.map((p) =>
          proposalOf(
            p,
            p.evidence === null || p.evidence.turn !== null
              ? undefined
              : citedSeq(turns, p.evidence, p.origin),
          ),
        );
        return renderProposeAnswer(await memory.propose({ sessionId, proposals }));
      } catch (err) {
        return failed(err);
      }
    },
  });
  return [recall, propose];
}

export type { MemoryTarget } from './agent-memory.js';
