// `memledger/ai-sdk`: memledger in the Vercel AI SDK (ai@6, language model middleware V3).
//
//   const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: memledgerMiddleware(me, { sessionId }) });
//   await generateText({ model, messages, tools: memledgerTools(me, { sessionId }) });
//
// The middleware joins the arrival into the prompt before the first token, records the user's
// message and the model's reply as turns (the reply with a receipt read from the call's own tool
// calls and results, never from its prose), and answers with a source part per memory the
// arrival showed. The tools recall, propose through the gate, and ask to forget: nothing the
// model does here approves, decides or forgets. A memory failure never fails the user's call.
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Message,
  LanguageModelV3Middleware,
  LanguageModelV3Prompt,
  LanguageModelV3Source,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { tool } from 'ai';
import { z } from 'zod';
import type { HostReceiptReport, ResponseBlock } from '../src/index.js';
import { FACT_ORIGINS } from '../src/domain/fact.js';
import { joinTextBlocks, shownJson } from '../src/rules.js';
import { collectUrls } from '../src/domain/history-import/imported-conversation.js';
import { detectUtility } from '../src/domain/utility.js';
import {
  renderForgetAnswer,
  renderProposeAnswer,
  recallForModel,
} from '../src/domain/tool-answers.js';
import {
  agentMemoryOf,
  ensureSession,
  storableReply,
  storableText,
  toolLabel,
  type AgentMemory,
  type CallOutcome,
  type MemoryArrival,
  type MemoryTarget,
} from './agent-memory.js';

/** Where in the middleware a memory failure happened. */
export type MemoryStage = 'arrival' | 'record';

/** How the middleware joins memory in and records. */
export interface MemledgerMiddlewareOptions {
  /** The memledger session this conversation is recorded in (made on first use). */
  sessionId: string;
  /** The session's title when the middleware makes it. */
  title?: string;
  /** The arrival's surface (default `chat`). */
  surface?: string;
  /** A source part per memory the arrival showed, with its passport (default true). */
  sources?: boolean;
  /**
   * Told of every memory failure; the call goes on without what failed (default: a warning on
   * stderr naming memledger's error code).
   */
  onError?: (error: unknown, stage: MemoryStage) => void;
}

/**
 * What one call may say to the middleware, as `providerOptions.memledger`: another session, or
 * that the call is a utility generation (a title, a summary for the UI), counted and not recorded.
 * A user message that starts with `__title__` or `__insight__` is one too.
 */
export interface MemledgerCallOptions {
  sessionId?: string;
  utility?: boolean;
}

/** What the model is told when memory could not be read: never that nothing is on record. */
export const ARRIVAL_UNAVAILABLE =
  '[Memory (memledger)] Memory could not be read this turn: what I know, and what was said before, may be on record even though it is not shown here. Do not assume nothing is on record.';

/** The longest user message the arrival recalls for (its bound; the turn is recorded whole). */
const MESSAGE_CHARS = 20_000;

function defaultOnError(error: unknown, stage: MemoryStage): void {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  process.emitWarning(
    `memledger (${stage}): ${typeof code === 'string' ? `${code}: ` : ''}${message}`,
  );
}

function callOptionsOf(params: LanguageModelV3CallOptions): MemledgerCallOptions {
  const raw = params.providerOptions?.memledger as Record<string, unknown> | undefined;
  const out: MemledgerCallOptions = {};
  if (typeof raw?.sessionId === 'string') out.sessionId = raw.sessionId;
  if (raw?.utility === true) out.utility = true;
  return out;
}

function userText(message: LanguageModelV3Message): string {
  if (message.role !== 'user') return '';
  return joinTextBlocks(
    message.content.map((p) =>
      p.type === 'text' ? { type: 'text', text: p.text } : { type: p.type },
    ),
  );
}

/**
 * The incoming exchange: the last user message (its place in the prompt, and which user message
 * of the conversation it is) and its text.
 */
function exchangeOf(
  prompt: LanguageModelV3Prompt,
): { index: number; nth: number; text: string } | null {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m?.role === 'user') {
      const nth = prompt.slice(0, i).filter((x) => x.role === 'user').length;
      return { index: i, nth, text: userText(m) };
    }
  }
  return null;
}

interface Rounds {
  blocks: ResponseBlock[];
  calls: Array<{ id: string; name: string }>;
  results: Map<string, { error: boolean; output: unknown }>;
  sources: Set<string>;
}

function emptyRounds(): Rounds {
  return { blocks: [], calls: [], results: new Map(), sources: new Set() };
}

function addCall(r: Rounds, id: string, name: string): void {
  r.blocks.push({ type: 'tool_use', name });
  if (!r.calls.some((c) => c.id === id)) r.calls.push({ id, name });
}

/** A prompt's tool result: an error when its output says so, or the call was denied. */
function outputFailed(output: { type: string }): boolean {
  return (
    output.type === 'error-text' ||
    output.type === 'error-json' ||
    output.type === 'execution-denied'
  );
}

/** The tool rounds of prompt messages (a reply's earlier steps): text, calls, results. */
function promptRounds(messages: readonly LanguageModelV3Message[], r: Rounds): void {
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const p of m.content) {
        if (p.type === 'text') r.blocks.push({ type: 'text', text: p.text });
        else if (p.type === 'tool-call') addCall(r, p.toolCallId, p.toolName);
        else if (p.type === 'tool-result') {
          r.results.set(p.toolCallId, { error: outputFailed(p.output), output: p.output });
        }
      }
    } else if (m.role === 'tool') {
      for (const p of m.content) {
        if (p.type === 'tool-result') {
          r.results.set(p.toolCallId, { error: outputFailed(p.output), output: p.output });
        }
      }
    }
  }
}

/** A call's own content: its text, provider-run tools, their results, its url sources. */
function contentRounds(content: readonly LanguageModelV3Content[], r: Rounds): void {
  for (const p of content) {
    if (p.type === 'text') r.blocks.push({ type: 'text', text: p.text });
    else if (p.type === 'tool-call') addCall(r, p.toolCallId, p.toolName);
    else if (p.type === 'tool-result') {
      r.results.set(p.toolCallId, { error: p.isError === true, output: p.result });
    } else if (p.type === 'source' && p.sourceType === 'url') r.sources.add(p.url);
  }
}

/**
 * The reply a reply's rounds make, as the store keeps it, read from the calls' own parts, never
 * from the model's prose: every tool it called (a call that failed, was denied or got no result
 * is named so and never counts as the tool having run; a call this middleware never saw the model
 * make, which only the prompt the app sent says happened, is `(unverified)` and its output is no
 * source), the URLs its tools returned and the sources the provider cited; "no tools ran" when
 * there were none. Null when it holds nothing to record.
 */
function replyOf(
  r: Rounds,
  made: (callId: string) => boolean,
): { content: string; receipt: HostReceiptReport } | null {
  const tools: string[] = [];
  const sources = new Set(r.sources);
  for (const call of r.calls) {
    const result = r.results.get(call.id);
    const outcome: CallOutcome = !made(call.id)
      ? 'unverified'
      : result === undefined
        ? 'no result'
        : result.error
          ? 'error'
          : 'ran';
    tools.push(toolLabel(call.name, outcome));
    if (outcome === 'ran') collectUrls(result?.output, sources);
  }
  return storableReply({ text: joinTextBlocks(r.blocks), tools, sources });
}

/** A call that is not the reply's last: it ends in tool calls the SDK will run and answer. */
function endsInToolCalls(content: readonly LanguageModelV3Content[]): boolean {
  return content.some((p) => p.type === 'tool-call' && p.providerExecuted !== true);
}

/** A source part per memory the arrival showed, its passport in `providerMetadata.memledger`. */
export function sourcesOf(arrival: MemoryArrival): LanguageModelV3Source[] {
  return arrival.memories.map((m) => ({
    type: 'source',
    sourceType: 'document',
    id: `memledger:${m.kind}:${m.id}`,
    mediaType: 'text/plain',
    title: m.line,
    providerMetadata: {
      memledger: JSON.parse(
        JSON.stringify({
          kind: m.kind,
          id: m.id,
          block: m.block,
          // the passport's stored strings as a model is shown stored text
          passport: shownJson(m.passport),
        }),
      ),
    },
  }));
}

/** The arrival's place: after the host's own leading system messages, before the conversation. */
function withArrival(prompt: LanguageModelV3Prompt, text: string): LanguageModelV3Prompt {
  let at = 0;
  while (prompt[at]?.role === 'system') at++;
  return [...prompt.slice(0, at), { role: 'system', content: text }, ...prompt.slice(at)];
}

/** The incoming message as the arrival recalls for it: bounded, cut on a code point. */
function recallMessage(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  return storableText(text.slice(0, MESSAGE_CHARS).replace(/[\uD800-\uDBFF]$/, ''));
}

/** A set that forgets its oldest entries past `cap` (state a long-lived process keeps). */
function remember<T>(set: Set<T> | Map<T, unknown>, cap: number): void {
  while (set.size > cap) set.delete(set.keys().next().value as T);
}

interface Exchange {
  arrival: MemoryArrival | null;
  userSeq: number | null;
}

/**
 * The AI SDK middleware (`wrapLanguageModel({ model, middleware })`): the arrival in, every
 * reply recorded with its receipt, a source per memory shown. docs/INTEGRATIONS.md, "AI SDK".
 */
export function memledgerMiddleware(
  target: MemoryTarget,
  options: MemledgerMiddlewareOptions,
): LanguageModelV3Middleware {
  const memory: AgentMemory = agentMemoryOf(target);
  const surface = options.surface ?? 'chat';
  const showSources = options.sources !== false;
  const report = (error: unknown, stage: MemoryStage) => {
    try {
      (options.onError ?? defaultOnError)(error, stage);
    } catch {
      // a reporter that throws must not fail the user's call either
    }
  };
  const known = new Set<string>();
  // each exchange in flight, by session and user message: its arrival, and the seq its user
  // turn was recorded at. A reply's later steps (after tool calls) and a retried call join the
  // same exchange (the promise is kept at once: two calls at the same moment open one).
  const exchanges = new Map<string, Promise<Exchange>>();
  // the tool calls this middleware saw the model make: only these count as having run
  const madeCalls = new Set<string>();
  const made = (callId: string) => madeCalls.has(callId);
  // a reply whose last call ended in tool calls (the SDK's step limit, or an approval it waits
  // for): recorded when the session's next exchange opens, with the results its prompt holds
  const held = new Map<string, Rounds>();

  const sessionOf = (params: LanguageModelV3CallOptions) =>
    callOptionsOf(params).sessionId ?? options.sessionId;

  const ensure = async (sessionId: string) => {
    if (known.has(sessionId)) return;
    await ensureSession(memory, sessionId, options.title ?? sessionId);
    known.add(sessionId);
    remember(known, 10_000);
  };

  const isUtility = (params: LanguageModelV3CallOptions, text: string) =>
    detectUtility(text, callOptionsOf(params).utility === true) !== null;

  // the arrival's own system message moves the user's message: count user messages instead
  const keyOf = (sessionId: string, ex: { nth: number; text: string }) =>
    `${sessionId}\u0000${ex.nth}\u0000${ex.text}`;

  const addReply = async (sessionId: string, rounds: Rounds) => {
    const reply = replyOf(rounds, made);
    if (reply === null) return;
    await ensure(sessionId);
    await memory.addTurn({ sessionId, role: 'assistant', ...reply });
  };

  /** The reply held in a session, completed by the results the new prompt holds, recorded. */
  const settleHeld = async (sessionId: string, prompt: LanguageModelV3Prompt) => {
    const rounds = held.get(sessionId);
    if (rounds === undefined) return;
    held.delete(sessionId);
    const later = emptyRounds();
    promptRounds(prompt, later);
    for (const call of rounds.calls) {
      const result = later.results.get(call.id);
      if (result !== undefined) rounds.results.set(call.id, result);
    }
    await addReply(sessionId, rounds);
  };

  /**
   * Opens an exchange: a reply the session holds recorded, the user's message recorded (so a
   * tool can cite it in this very reply), then the arrival read. Without `text` (a continuation
   * whose opening this middleware did not see) it only reads the arrival.
   */
  const open = async (
    sessionId: string,
    text: string | null,
    prompt: LanguageModelV3Prompt,
  ): Promise<Exchange> => {
    let userSeq: number | null = null;
    try {
      await settleHeld(sessionId, prompt);
      if (text !== null && text.trim() !== '') {
        await ensure(sessionId);
        const content = storableText(text);
        userSeq = (await memory.addTurn({ sessionId, role: 'user', content })).seq;
      }
    } catch (err) {
      report(err, 'record');
    }
    let arrival: MemoryArrival | null = null;
    try {
      await ensure(sessionId);
      const message = text === null ? undefined : recallMessage(text);
      arrival = await memory.arrival({
        surface,
        sessionId,
        ...(message === undefined ? {} : { message }),
      });
    } catch (err) {
      report(err, 'arrival');
    }
    return { arrival, userSeq };
  };

  /** The rounds of a reply so far: the prompt's after the user's message, and this call's. */
  const roundsOf = (params: LanguageModelV3CallOptions, own: Rounds): Rounds | null => {
    const ex = exchangeOf(params.prompt);
    if (ex === null) return null;
    const all = emptyRounds();
    promptRounds(params.prompt.slice(ex.index + 1), all);
    all.blocks.push(...own.blocks);
    for (const c of own.calls) if (!all.calls.some((p) => p.id === c.id)) all.calls.push(c);
    for (const [id, r] of own.results) all.results.set(id, r);
    for (const s of own.sources) all.sources.add(s);
    return all;
  };

  /**
   * What a call ends: a reply still running tools is held; a finished one is recorded (with
   * every tool round since the user's message), or counted when the call was a utility.
   */
  const finish = async (
    params: LanguageModelV3CallOptions,
    own: Rounds,
    toolsPending: boolean,
  ): Promise<void> => {
    const ex = exchangeOf(params.prompt);
    if (ex === null) return;
    const sessionId = sessionOf(params);
    for (const c of own.calls) madeCalls.add(c.id);
    remember(madeCalls, 10_000);
    try {
      if (isUtility(params, ex.text)) {
        if (toolsPending) return;
        await ensure(sessionId);
        // counted on the request, which may name its kind (`__title__…`: a title)
        await memory.addTurn({
          sessionId,
          role: 'user',
          content: ex.text.trim() === '' ? '(utility)' : storableText(ex.text),
          utility: true,
        });
        return;
      }
      const rounds = roundsOf(params, own);
      if (rounds === null) return;
      if (toolsPending) {
        held.set(sessionId, rounds);
        remember(held, 1_000);
        return;
      }
      held.delete(sessionId);
      await addReply(sessionId, rounds);
    } catch (err) {
      report(err, 'record');
    } finally {
      if (!toolsPending) exchanges.delete(keyOf(sessionId, ex));
    }
  };

  const arrivalFor = async (params: LanguageModelV3CallOptions) => {
    const ex = exchangeOf(params.prompt);
    const open = ex === null ? undefined : exchanges.get(keyOf(sessionOf(params), ex));
    return open === undefined ? null : (await open).arrival;
  };

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const ex = exchangeOf(params.prompt);
      if (ex === null || isUtility(params, ex.text)) return params;
      const sessionId = sessionOf(params);
      const key = keyOf(sessionId, ex);
      let opening = exchanges.get(key);
      // a prompt that ends in the user's message opens the exchange (once: a retried call finds
      // it open); a later step of the reply joins the one open
      if (opening === undefined) {
        const text = ex.index === params.prompt.length - 1 ? ex.text : null;
        opening = open(sessionId, text, params.prompt);
        exchanges.set(key, opening);
        // a reply that never finishes leaves its entry: keep the map bounded
        remember(exchanges, 1_000);
      }
      const { arrival, userSeq } = await opening;
      const cite =
        userSeq === null
          ? ''
          : `\n[This message (recorded by memledger)] The user's latest message is turn ${userSeq} of this session: a memory proposed from it cites evidence.turn ${userSeq} and quotes the user's exact words.`;
      return {
        ...params,
        prompt: withArrival(
          params.prompt,
          arrival === null ? ARRIVAL_UNAVAILABLE : `${arrival.text}${cite}`,
        ),
      };
    },

    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      const pending = endsInToolCalls(result.content);
      const arrival = pending ? null : await arrivalFor(params);
      const own = emptyRounds();
      contentRounds(result.content, own);
      await finish(params, own, pending);
      if (!showSources || !arrival) return result;
      return { ...result, content: [...result.content, ...sourcesOf(arrival)] };
    },

    async wrapStream({ doStream, params }) {
      const { stream, ...rest } = await doStream();
      const arrival = await arrivalFor(params);
      const texts = new Map<string, string>();
      const order: string[] = [];
      const content: LanguageModelV3Content[] = [];
      const transform = new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
        async transform(part, controller) {
          if (part.type === 'text-delta') {
            if (!texts.has(part.id)) order.push(part.id);
            texts.set(part.id, (texts.get(part.id) ?? '') + part.delta);
          } else if (
            part.type === 'tool-call' ||
            part.type === 'tool-result' ||
            part.type === 'source'
          ) {
            content.push(part);
          } else if (part.type === 'finish') {
            const own = emptyRounds();
            for (const id of order) own.blocks.push({ type: 'text', text: texts.get(id) ?? '' });
            contentRounds(content, own);
            const pending = endsInToolCalls(content);
            await finish(params, own, pending);
            if (showSources && arrival && !pending) {
              for (const s of sourcesOf(arrival)) controller.enqueue(s);
            }
          }
          controller.enqueue(part);
        },
      });
      return { ...rest, stream: stream.pipeThrough(transform) };
    },
  };
}

const recallInput = z.strictObject({
  query: z.string().min(1).max(4096).describe('what to look for, in the user’s words'),
  k: z.int().min(1).max(50).optional().describe('how many memories (default 10)'),
  kinds: z
    .array(z.enum(['turn', 'fact']))
    .min(1)
    .max(2)
    .optional()
    .describe('recorded turns, live facts, or both (default both)'),
});

const proposalInput = z.strictObject({
  slot: z.string().min(1).max(200).describe('what_i_know_about_user, stances, …'),
  key: z.string().min(1).max(200).optional(),
  text: z.string().min(1).max(2000).describe('the memory, one line'),
  origin: z.enum(FACT_ORIGINS).describe('saw (the user said it), did, inferred or summarized'),
  evidence: z
    .strictObject({
      turn: z.int().min(1).optional().describe('the number of the user turn that says it'),
      quote: z.string().min(1).max(2000).optional().describe('the user’s own words, exactly'),
      tool: z.string().min(1).max(200).optional().describe('for origin did: the tool that ran'),
    })
    .optional(),
  validFrom: z.string().max(64).optional(),
  validTo: z.string().max(64).optional(),
});

const forgetInput = z.strictObject({
  turn: z.int().min(1).describe('the number of the user turn that asks to forget'),
  quote: z.string().min(1).max(2000).describe('the user’s own words asking, exactly'),
  scope: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('turn'), seq: z.int().min(1) }),
      z.strictObject({ kind: z.literal('session') }),
      z.strictObject({ kind: z.literal('fact'), fact: z.string().min(1).max(200) }),
      z.strictObject({ kind: z.literal('phrase'), phrase: z.string().min(1).max(2000) }),
    ])
    .describe('what to forget: a turn of this session, this session, a fact, or a phrase'),
});

/** How the tools reach memory. */
export interface MemledgerToolsOptions {
  /** The session proposals and forget requests cite turns of. */
  sessionId: string;
  /**
   * Whether `request_forget` waits for the user's approval in the app before it runs (the AI
   * SDK's `needsApproval`; default true). Either way the owner decides what is forgotten.
   */
  forgetNeedsApproval?: boolean;
}

/**
 * memledger's tools for `generateText`/`streamText`: `recall`, `propose_memories` (through the
 * gate: what passes waits for the owner, what fails is dropped with its code and reason) and
 * `request_forget`. Each returns structured data; the model reads the same text memledger's MCP
 * tools answer with.
 */
export function memledgerTools(target: MemoryTarget, options: MemledgerToolsOptions) {
  const memory = agentMemoryOf(target);
  const { sessionId } = options;
  return {
    recall: tool({
      description:
        'Searches this user’s recorded conversations and live memory, each item with its passport (origin, date, evidence, receipt). Reads only. An empty answer says what was searched; when every kind and session was searched, no record exists: say so.',
      inputSchema: recallInput,
      async execute(input) {
        return recallForModel((q, o) => memory.recall(q, o), input.query, {
          ...(input.k === undefined ? {} : { k: input.k }),
          ...(input.kinds === undefined ? {} : { kinds: input.kinds }),
        });
      },
      toModelOutput: ({ output }) => ({ type: 'text' as const, value: output.text }),
    }),
    propose_memories: tool({
      description:
        'Proposes memories from this conversation. Each must quote the user’s own words from a numbered user turn (evidence.turn + evidence.quote), or, for origin did, cite a tool on that turn’s receipt. What passes waits for the owner’s review, not live; what fails is dropped with a code and a reason. Nothing proposed becomes live through any tool.',
      inputSchema: z.strictObject({ proposals: z.array(proposalInput).min(1).max(100) }),
      async execute(input) {
        const result = await memory.propose({
          sessionId,
          proposals: JSON.parse(JSON.stringify(input.proposals)),
        });
        return { ...result, text: renderProposeAnswer(result) };
      },
      toModelOutput: ({ output }) => ({ type: 'text' as const, value: output.text }),
    }),
    request_forget: tool({
      description:
        'Files the user’s request to forget something, quoting their own words asking (turn + quote). Nothing is forgotten until the owner honours it, unless a standing rule the owner signed honours such requests at once; the answer says which, and what to tell the user.',
      inputSchema: forgetInput,
      needsApproval: options.forgetNeedsApproval ?? true,
      async execute(input) {
        const scope =
          input.scope.kind === 'turn'
            ? { kind: 'turn' as const, session: sessionId, seq: input.scope.seq }
            : input.scope.kind === 'session'
              ? { kind: 'session' as const, session: sessionId }
              : input.scope;
        const filed = await memory.requestForget({
          sessionId,
          turn: input.turn,
          quote: input.quote,
          scope,
        });
        return { ...filed, text: renderForgetAnswer(filed) };
      },
      toModelOutput: ({ output }) => ({ type: 'text' as const, value: output.text }),
    }),
  };
}

export type { MemoryTarget } from './agent-memory.js';
