// What a framework adapter (and a Claude Code hook) may do with memory, as the agent: record
// turns, read the arrival, recall, propose through the gate, ask to forget, read verified live
// facts. Nothing here approves, decides or forgets: those are the owner's, and no adapter holds
// them. Two ways in, the same answers: a subject handle of a local engine, or a running
// `memledger serve` through its HTTP API as one token (an agent token, or a reader token that
// only reads).
import type {
  Fact,
  ForgetRequest,
  ForgetScope,
  HostReceiptReport,
  Proposal,
  ProposeResult,
  RecallItem,
  ShownMemory,
  SubjectHandle,
  TurnRole,
} from '../src/index.js';
import { ERROR_CODES, EngineError, isEngineError, type ErrorCode } from '../src/domain/errors.js';
import { INPUT_LIMITS } from '../src/domain/input.js';
import {
  receiptItem,
  TOOLS_ONLY_TEXT,
} from '../src/domain/history-import/imported-conversation.js';
import { stripImitatedReceipts } from '../src/rules.js';
import { SERVER_ERROR_CODES, ServerError, type ServerErrorCode } from '../server/server-errors.js';

/** A recorded turn as an adapter reads it back. */
export interface MemoryTurn {
  seq: number;
  role: TurnRole;
  content: string;
  speaker?: string | null;
}

/** The arrival as an adapter joins it in: the text, and the memories it showed. */
export interface MemoryArrival {
  text: string;
  /** Every fact and turn the arrival's text shows, each with its line and passport. */
  memories: ShownMemory[];
}

/** A forget request as filed, and why it waits when it does. */
export type FiledForget = Pick<ForgetRequest, 'id' | 'status' | 'turn' | 'quote'> & {
  waits?: string;
};

/** The agent's side of one subject's memory. */
export interface AgentMemory {
  /** The session, or null when it does not exist. */
  session(id: string): Promise<{ id: string; turnCount: number } | null>;
  /** Makes the session; SESSION_EXISTS when another process made it a moment ago. */
  createSession(id: string, title: string): Promise<{ id: string; turnCount: number }>;
  /** The session's turns in order; only the last `n` when given. */
  turns(sessionId: string, last?: number): Promise<MemoryTurn[]>;
  /** Records a turn, or counts a utility generation (`utility: true`) without recording it. */
  addTurn(input: {
    sessionId: string;
    role: TurnRole;
    content: string;
    receipt?: HostReceiptReport;
    utility?: boolean;
    at?: Date;
  }): Promise<{ recorded: boolean; seq: number | null }>;
  /** The arrival for a surface and session, recalling for the incoming message when given. */
  arrival(input: { surface: string; sessionId?: string; message?: string }): Promise<MemoryArrival>;
  /** Recall: turns and live facts, each with its passport. */
  recall(
    query: string,
    options?: { k?: number; kinds?: ReadonlyArray<'turn' | 'fact'>; session?: string },
  ): Promise<RecallItem[]>;
  /** Proposes through the gate: what passes waits in the pile, what fails is dropped with a code. */
  propose(input: { sessionId: string; proposals: readonly Proposal[] }): Promise<ProposeResult>;
  /** Files a request to forget, quoting the user's words asking for it. */
  requestForget(input: {
    sessionId: string;
    turn: number;
    quote: string;
    scope: ForgetScope;
  }): Promise<FiledForget>;
  /** Live facts, each verified against the owner's signatures where it is read. */
  liveFacts(): Promise<Fact[]>;
}

/** Who the adapters' writes are from, in the pile and on forget requests. */
const AGENT = 'agent';

/** A local store's subject, through its handle (the handle's owner powers are never used). */
export function handleMemory(me: SubjectHandle): AgentMemory {
  return {
    async session(id) {
      try {
        return await me.sessions.get(id);
      } catch (err) {
        if (isEngineError(err) && err.code === 'SESSION_NOT_FOUND') return null;
        throw err;
      }
    },
    createSession: (id, title) => me.sessions.create({ id, title }),
    turns: (sessionId, last) => me.history.turns(sessionId, last === undefined ? {} : { last }),
    async addTurn(input) {
      const r = await me.turns.add(input);
      return { recorded: r.recorded, seq: r.recorded ? r.turn.seq : null };
    },
    async arrival(input) {
      const a = await me.arrival.assemble(input);
      return { text: a.text, memories: a.memories };
    },
    recall: (query, options = {}) =>
      me.recall.search(query, {
        ...(options.k === undefined ? {} : { k: options.k }),
        ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
        ...(options.session === undefined ? {} : { session: options.session }),
      }),
    propose: (input) => me.gate.propose({ ...input, proposedBy: AGENT }),
    async requestForget(input) {
      const r = await me.gate.requestForget({ ...input, requestedBy: AGENT });
      return filed(r);
    },
    liveFacts: () => me.facts.live(),
  };
}

function filed(r: ForgetRequest & { waits?: string }): FiledForget {
  return {
    id: r.id,
    status: r.status,
    turn: r.turn,
    quote: r.quote,
    ...(r.waits === undefined ? {} : { waits: r.waits }),
  };
}

/** The error a server's answer names: the engine's code or a face's (any other is INTERNAL). */
function answeredError(code: unknown, message: string): Error {
  if ((SERVER_ERROR_CODES as readonly unknown[]).includes(code))
    return new ServerError(code as ServerErrorCode, message);
  const known = (ERROR_CODES as readonly unknown[]).includes(code);
  return new EngineError(known ? (code as ErrorCode) : 'INTERNAL', message);
}

/** The server could not be reached, or answered with something that is not memledger's. */
export class MemoryServerUnreachable extends Error {
  readonly code = 'SERVER_UNREACHABLE';

  constructor(message: string) {
    super(message);
    this.name = 'MemoryServerUnreachable';
  }
}

/** How `httpMemory` reaches its server. */
export interface HttpMemoryOptions {
  /** The error a failed connection becomes (default `MemoryServerUnreachable`). */
  unreachable?: (message: string) => Error;
  /** How long one request may take (default 30 s). */
  timeoutMs?: number;
}

/** A fact's dates as JSON carries them, read back as dates. */
function factOf(json: Fact): Fact {
  const date = (v: unknown) => (typeof v === 'string' ? new Date(v) : (v as Date | null));
  return {
    ...json,
    validFrom: date(json.validFrom),
    validTo: date(json.validTo),
    recordedAt: date(json.recordedAt) as Date,
    supersededAt: date(json.supersededAt),
    statusAt: date(json.statusAt) as Date,
  };
}

/** The most one page of the server holds (facts and turns): the HTTP face's bound, LIMITS.pageItems. */
const PAGE = 200;

/**
 * A running `memledger serve`, through its HTTP API as one token. The server checks the token's
 * role on every request: a reader token's writes are refused there (ROLE_FORBIDDEN), not here.
 */
export function httpMemory(
  baseUrl: string,
  token: string,
  options: HttpMemoryOptions = {},
): AgentMemory {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const unreachable = options.unreachable ?? ((m: string) => new MemoryServerUnreachable(m));
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(new URL(path, base), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw unreachable(`cannot reach memledger serve at ${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw unreachable(
        `${base} answered ${res.status} with something that is not memledger's JSON`,
      );
    }
    if (!res.ok) {
      const e = (doc as { error?: { code?: unknown; message?: unknown } }).error;
      throw answeredError(
        e?.code,
        typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
      );
    }
    return doc as T;
  };
  const seg = encodeURIComponent;
  return {
    async session(id) {
      try {
        return await call<{ id: string; turnCount: number }>('GET', `v1/sessions/${seg(id)}`);
      } catch (err) {
        if (isEngineError(err) && err.code === 'SESSION_NOT_FOUND') return null;
        throw err;
      }
    },
    createSession: (id, title) =>
      call<{ id: string; turnCount: number }>('POST', 'v1/sessions', { id, title }),
    async turns(sessionId, last) {
      // the server takes the last N first, then pages them: follow the pages to the end
      const lastQuery = last === undefined ? '' : `&last=${last}`;
      const all: MemoryTurn[] = [];
      let after = 0;
      for (;;) {
        const page = await call<{ turns: MemoryTurn[]; nextAfterSeq: number | null }>(
          'GET',
          `v1/sessions/${seg(sessionId)}/turns?afterSeq=${after}&limit=${PAGE}${lastQuery}`,
        );
        all.push(...page.turns);
        if (page.nextAfterSeq === null) return all;
        after = page.nextAfterSeq;
      }
    },
    async addTurn({ sessionId, at, ...rest }) {
      const r = await call<{ recorded: boolean; turn?: { seq: number } | null }>(
        'POST',
        `v1/sessions/${seg(sessionId)}/turns`,
        { ...rest, ...(at === undefined ? {} : { at: at.toISOString() }) },
      );
      return { recorded: r.recorded, seq: r.turn?.seq ?? null };
    },
    async arrival(input) {
      const a = await call<{ text: string; memories: ShownMemory[] }>('POST', 'v1/arrival', input);
      return { text: a.text, memories: a.memories };
    },
    async recall(query, o = {}) {
      const q = new URLSearchParams({ q: query });
      if (o.k !== undefined) q.set('k', String(o.k));
      if (o.kinds !== undefined) q.set('kinds', o.kinds.join(','));
      if (o.session !== undefined) q.set('session', o.session);
      return (await call<{ items: RecallItem[] }>('GET', `v1/recall?${q}`)).items;
    },
    // the server names the proposer and requester itself (agent, and the token's id)
    propose: (input) => call<ProposeResult>('POST', 'v1/proposals', input),
    async requestForget(input) {
      return filed(
        await call<ForgetRequest & { waits?: string }>('POST', 'v1/forget-requests', input),
      );
    },
    async liveFacts() {
      const facts: Fact[] = [];
      for (let offset: number | null = 0; offset !== null;) {
        const page: { facts: Fact[]; page: { nextOffset: number | null } } = await call(
          'GET',
          `v1/facts?limit=${PAGE}&offset=${offset}`,
        );
        facts.push(...page.facts.map(factOf));
        offset = page.page.nextOffset;
      }
      return facts;
    },
  };
}

/** What an adapter is given: a subject handle, or a running `memledger serve` and a token. */
export type MemoryTarget = SubjectHandle | { url: string; token: string };

/** The agent's side of memory for what an adapter was given. */
export function agentMemoryOf(target: MemoryTarget): AgentMemory {
  if ('url' in target && 'token' in target) {
    if (typeof target.url !== 'string' || typeof target.token !== 'string') {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'a server is named by its url and a token (strings)',
      );
    }
    return httpMemory(target.url, target.token);
  }
  if (typeof (target as Partial<SubjectHandle>).gate?.propose !== 'function') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'memory is a subject handle (engine.subject(id)) or { url, token } of a memledger serve',
    );
  }
  return handleMemory(target);
}

/**
 * The session, made on first sight (a title at most 1,000 characters); one another process made a
 * moment ago is taken as it is.
 */
export async function ensureSession(
  memory: AgentMemory,
  sessionId: string,
  title: string,
): Promise<{ id: string; turnCount: number }> {
  const found = await memory.session(sessionId);
  if (found !== null) return found;
  try {
    return await memory.createSession(sessionId, title.slice(0, 1000));
  } catch (err) {
    if (isEngineError(err) && err.code === 'SESSION_EXISTS') {
      const made = await memory.session(sessionId);
      if (made !== null) return made;
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// What a framework hands an adapter, made storable: a model, its tools or a user can put in a
// reply what the store refuses (a NUL, a lone surrogate, a tool named with "]]", a reply that is
// nothing but an imitated receipt). One such item must never cost the reply and its receipt.

const NUL = String.fromCharCode(0);
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CUT = '\n[… cut by memledger: the turn was longer than 1,000,000 characters]';

/** Text the store keeps: NUL and lone surrogates shown as U+FFFD, at most a turn's length. */
export function storableText(text: string, max: number = INPUT_LIMITS.turnLength): string {
  const clean = text.split(NUL).join('\uFFFD').replace(LONE_SURROGATES, '\uFFFD');
  if (clean.length <= max) return clean;
  return (clean.slice(0, max - CUT.length) + CUT).replace(LONE_SURROGATES, '\uFFFD');
}

/** How a tool call ended, when it did not run: its receipt entry says so. */
export type CallOutcome = 'ran' | 'error' | 'no result' | 'unverified';

/**
 * A tool's receipt entry: its name as the store can keep it (else `unnamed_tool`), and how the
 * call ended when it did not run (`search (error)`): never counted as the tool having run.
 */
export function toolLabel(name: unknown, outcome: CallOutcome = 'ran'): string {
  const suffix = outcome === 'ran' ? '' : ` (${outcome})`;
  const item = typeof name === 'string' ? receiptItem(name) : null;
  const base =
    item === null ? 'unnamed_tool' : item.slice(0, INPUT_LIMITS.toolLength - suffix.length);
  return `${base.replace(LONE_SURROGATES, '')}${suffix}`;
}

/**
 * A reply as the store keeps it, or null when it holds nothing to record: its text (imitated
 * receipts cut, made storable; a reply that only ran tools says so) and its receipt (tools as
 * `toolLabel` made them, deduplicated and capped; storable URLs; "no tools ran" when none ran).
 */
export function storableReply(reply: {
  text: string;
  tools: readonly string[];
  sources: Iterable<string>;
}): { content: string; receipt: HostReceiptReport } | null {
  const cap = INPUT_LIMITS.listItems;
  const tools = [...new Set(reply.tools.map((t) => toolLabel(t)))].slice(0, cap);
  const sources: string[] = [];
  for (const s of reply.sources) {
    const item = receiptItem(s);
    if (item !== null && !sources.includes(item)) sources.push(item);
    if (sources.length >= cap) break;
  }
  const text = storableText(stripImitatedReceipts(reply.text).text);
  // sources the provider cited with no tool named: a tool ran, unnamed (the engine's rule)
  const named = tools.length === 0 && sources.length > 0 ? ['unnamed_tool'] : tools;
  const receipt: HostReceiptReport =
    named.length === 0 ? { noTools: true } : { tools: named, sources };
  if (text.trim() !== '') return { content: text, receipt };
  return named.length === 0 ? null : { content: TOOLS_ONLY_TEXT, receipt };
}
