// `memledger/langgraph`: memledger as a LangGraph store (@langchain/langgraph 1.7, BaseStore).
//
//   const store = new MemledgerStore(engine.subject('alice'), { sessionId: 'chat-1' });
//   const graph = builder.compile({ store }); // nodes reach it as config.store / getStore()
//
// A LangGraph store is a key-value store: what a node puts, the next get returns. memledger's
// laws differ, and where they do the store follows the laws and says so:
// - get, search and listNamespaces read verified live facts only (each read checks the owner's
//   signatures); a proposal, a rejected fact or a fact edited in the database is not there;
// - put proposes through the write gate: the value names the user's words it rests on, and what
//   passes waits in the owner's pile, NOT visible to get until the owner approves; what the gate
//   drops throws `ProposalDropped` with the gate's code and reason, and nothing is stored;
// - delete cannot forget: forgetting needs the user's own words asking for it, and the owner's
//   signature. A put of `{ forget: { turn, quote } }` files the request; plain delete refuses.
// Nothing here approves, decides or forgets: those are the owner's, and no store holds them.
import { BaseStore } from '@langchain/langgraph';
import type {
  Item,
  ListNamespacesOperation,
  MatchCondition,
  Operation,
  OperationResults,
  PutOperation,
  SearchOperation,
} from '@langchain/langgraph';
import type { BaseMessage } from '@langchain/core/messages';
import type { Fact, FactOrigin, Proposal, ProposeResult } from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { byPassport } from '../src/domain/fact-render.js';
import type { DropCode } from '../src/domain/gate-rules.js';
import { collectUrls } from '../src/domain/history-import/imported-conversation.js';
import {
  isoDay,
  joinRounds,
  renderFactLine,
  renderForgetAnswer,
  renderProposeAnswer,
  shownInline,
} from '../src/rules.js';
import {
  agentMemoryOf,
  ensureSession,
  storableReply,
  storableText,
  toolLabel,
  type AgentMemory,
  type CallOutcome,
  type FiledForget,
  type MemoryTarget,
} from './agent-memory.js';

/** A search result: an item, ranked by recall when the search had a query. */
export type MemledgerSearchItem = Item & { score?: number };

/** How a `MemledgerStore` maps LangGraph's namespaces and where its proposals cite. */
export interface MemledgerStoreOptions {
  /**
   * The session whose user turns a put's evidence quotes, unless the value names its own
   * (`evidence.sessionId`); also where `recordMessages` records.
   */
  sessionId?: string;
  /**
   * The namespace the slots live under (default `['memories']`): a fact of slot S is the item at
   * `[...namespace, S]`, so `['memories', 'what_i_know_about_user']`. `[]` puts slots at the root.
   */
  namespace?: readonly string[];
  /** The title a session gets when `recordMessages` makes it (default: its id). */
  title?: string;
  /** The zone a passport's date is rendered in (default UTC). */
  timeZone?: string;
  /**
   * Told what memledger answered every write (a proposal, a drop, a forget request), and when a
   * get finds nothing live where this store's put waits for the owner. Without it, only the last
   * is said, once per proposal, as a process warning (MEMLEDGER_PENDING).
   */
  onAnswer?: (answer: MemledgerAnswer) => void;
}

/**
 * What memledger answered a write, in the words its tools tell a model (`put`, `forget`); and,
 * once per proposal, a get that found nothing live where this store's put still waits (`pending`).
 */
export interface MemledgerAnswer {
  kind: 'put' | 'forget' | 'pending';
  namespace: string[];
  key: string;
  /** The rendered answer (`renderProposeAnswer` / `renderForgetAnswer`). */
  text: string;
  result: ProposeResult | FiledForget | PendingPut;
}

/**
 * An item's value: the fact's text and its passport. `line` is the fact as memledger shows it to
 * a model (passport first, one line, receipt markers defanged); put that in a prompt. The stored
 * strings (`text`, `key`, `evidence.quote`, `evidence.tool`) are shown as memledger shows stored
 * text to a model, on one line (`shownInline`: line breaks as a space, receipt markers defanged,
 * what does not show as code points), the same through a handle and over HTTP.
 */
export interface MemledgerItemValue {
  [field: string]: unknown;
  text: string;
  line: string;
  factId: string;
  slot: string;
  key: string | null;
  origin: FactOrigin;
  /** The day the passport shows (validFrom, else when it was recorded), YYYY-MM-DD. */
  date: string;
  /** Whether the quoted words say what the text claims (the gate's verdict). */
  attested: boolean;
  evidence: {
    sessionId: string | null;
    turn: number | null;
    quote: string | null;
    tool: string | null;
  };
  validFrom: string | null;
  validTo: string | null;
  /** Always true: nothing else is read. */
  live: true;
}

/** A put of this store that is not live yet (it waits for the owner, or was rejected). */
export interface PendingPut {
  proposalId: string;
  namespace: string[];
  key: string;
  slot: string;
  text: string;
  attested: boolean;
  /** What memledger answered the put. */
  answer: string;
}

/** A turn `recordMessages` recorded, or counted as a utility generation. */
export interface RecordedMessage {
  role: 'user' | 'assistant';
  recorded: boolean;
  seq: number | null;
}

/**
 * The gate dropped a put's proposal: nothing was stored. `code` is the gate's (QUOTE_NOT_FOUND,
 * NO_EVIDENCE, EVIDENCE_NOT_USER_TURN, UNKNOWN_SLOT, …), `reason` its words.
 */
export class ProposalDropped extends Error {
  readonly code: DropCode;
  readonly reason: string;
  readonly dropped: ProposeResult['dropped'];
  readonly namespace: string[];
  readonly key: string;
  /** What memledger's tools tell a model about the drop. */
  readonly answer: string;

  constructor(namespace: string[], key: string, result: ProposeResult) {
    const first = result.dropped[0] as ProposeResult['dropped'][number];
    const answer = renderProposeAnswer(result);
    super(
      `memledger's write gate dropped the put of ${[...namespace, key].join('/')}: ${first.code}: ${first.reason}. Nothing was stored.\n${answer}`,
    );
    this.name = 'ProposalDropped';
    this.code = first.code;
    this.reason = first.reason;
    this.dropped = result.dropped;
    this.namespace = namespace;
    this.key = key;
    this.answer = answer;
  }
}

/** Whether `value` is a dropped put's error. */
export function isProposalDropped(value: unknown): value is ProposalDropped {
  return value instanceof ProposalDropped;
}

/** The value fields a put may carry (the passport fields a get returns are memledger's to set). */
const PUT_FIELDS = new Set(['text', 'origin', 'evidence', 'validFrom', 'validTo']);
const EVIDENCE_FIELDS = new Set(['sessionId', 'turn', 'quote', 'tool']);
const FORGET_FIELDS = new Set(['sessionId', 'turn', 'quote']);
/** Recall's largest answer: a search with a query ranks among this many facts. */
const RECALL_K = 200;
/** How many of its puts a store remembers for `pending()`. */
const PENDING_KEPT = 1000;
/** How many sessions a store remembers having made (a long-lived process records in many). */
const SESSIONS_KEPT = 10_000;

const invalid = (field: string, message: string) =>
  new EngineError('INVALID_ARGUMENT', message, { data: { field } });

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function checkLabels(labels: readonly unknown[], what: string): string[] {
  for (const l of labels) {
    if (typeof l !== 'string' || l === '' || /[.:\0]/.test(l)) {
      throw invalid(what, `${what} labels are non-empty strings without '.', ':' or NUL`);
    }
  }
  return labels as string[];
}

/** A limit or an offset: a whole number of at least 0 (`fallback` when not given). */
function count(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalid(field, `${field} is a whole number of at least 0`);
  }
  return value;
}

/** A filter as LangGraph's stores read one: a value's top-level field, exact or by operator. */
function matches(value: unknown, condition: unknown): boolean {
  if (isRecord(condition)) {
    const ops = Object.keys(condition);
    if (ops.length > 0 && ops.every((op) => op.startsWith('$'))) {
      return ops.every((op) => {
        const c = condition[op];
        switch (op) {
          case '$eq':
            return value === c;
          case '$ne':
            return value !== c;
          case '$gt':
            return Number(value) > Number(c);
          case '$gte':
            return Number(value) >= Number(c);
          case '$lt':
            return Number(value) < Number(c);
          case '$lte':
            return Number(value) <= Number(c);
          case '$in':
            return Array.isArray(c) && c.includes(value);
          case '$nin':
            return !Array.isArray(c) || !c.includes(value);
          default:
            return false;
        }
      });
    }
  }
  return value === condition;
}

function conditionHolds(cond: MatchCondition, ns: readonly string[]): boolean {
  const { path } = cond;
  if (path.length > ns.length) return false;
  const at = cond.matchType === 'prefix' ? 0 : ns.length - path.length;
  return path.every((p, i) => p === '*' || ns[at + i] === p);
}

/** A stored string as a model is shown it, on one line (null stays null). */
const shown = <T extends string | null>(s: T): T => (s === null ? null : shownInline(s)) as T;

type Blocks = Parameters<typeof joinRounds>[0][number];

/** A message's content as text blocks (a string, or LangChain's content blocks). */
function blocksOf(m: BaseMessage): Blocks {
  const c: unknown = m.content;
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  if (!Array.isArray(c)) return [];
  return c.map((b: unknown) =>
    isRecord(b) && b.type === 'text' && typeof b.text === 'string'
      ? { type: 'text', text: b.text }
      : { type: isRecord(b) && typeof b.type === 'string' ? b.type : 'other' },
  );
}

/**
 * memledger as a LangGraph store: `graph.compile({ store: new MemledgerStore(target, options) })`.
 * `target` is a subject handle (`engine.subject(id)`) or `{ url, token }` of a `memledger serve`
 * (an agent token; a reader token reads, and its writes are refused with ROLE_FORBIDDEN).
 */
export class MemledgerStore extends BaseStore {
  /** The agent's side of the subject's memory (never the owner's). */
  readonly memory: AgentMemory;
  private readonly prefix: string[];
  private readonly options: MemledgerStoreOptions;
  private readonly puts = new Map<string, PendingPut>();
  private readonly knownSessions = new Set<string>();
  private readonly noted = new Set<string>();

  constructor(target: MemoryTarget, options: MemledgerStoreOptions = {}) {
    super();
    this.memory = agentMemoryOf(target);
    if (options.sessionId !== undefined && typeof options.sessionId !== 'string') {
      throw invalid('sessionId', 'sessionId is a string');
    }
    this.prefix = checkLabels([...(options.namespace ?? ['memories'])], 'namespace');
    this.options = options;
  }

  /** The slot a namespace names, or null when it is not `[...namespace, slot]`. */
  private slotOf(namespace: readonly string[]): string | null {
    if (namespace.length !== this.prefix.length + 1) return null;
    if (!this.prefix.every((p, i) => namespace[i] === p)) return null;
    return namespace[namespace.length - 1] as string;
  }

  private namespaceOf(slot: string): string[] {
    return [...this.prefix, slot];
  }

  private itemOf(f: Fact): Item {
    // over HTTP the strings come as the server shows them (shownJson); inline after that is
    // inline of the stored string, so both paths give the same value
    const value: MemledgerItemValue = {
      text: shown(f.text),
      line: renderFactLine(f, this.options.timeZone),
      factId: f.id,
      slot: f.slot,
      key: shown(f.key),
      origin: f.origin,
      date: isoDay(f.validFrom ?? f.recordedAt, this.options.timeZone),
      attested: f.attested,
      evidence: {
        sessionId: f.evidence.sessionId,
        turn: f.evidence.seq,
        quote: shown(f.evidence.quote),
        tool: shown(f.evidence.tool),
      },
      validFrom: f.validFrom?.toISOString() ?? null,
      validTo: f.validTo?.toISOString() ?? null,
      live: true,
    };
    return {
      namespace: this.namespaceOf(f.slot),
      key: shown(f.key) ?? f.id,
      value,
      createdAt: f.recordedAt,
      updatedAt: f.statusAt,
    };
  }

  /**
   * The live fact at a namespace and key (its key, or its id when it has none), or null. Keys
   * are compared as shown (`shownInline`), so the key as put and the key an item carries both
   * find it, through a handle and over HTTP.
   */
  private find(facts: readonly Fact[], namespace: readonly string[], key: string): Fact | null {
    const slot = this.slotOf(namespace);
    if (slot === null) return null;
    const asShown = typeof key === 'string' ? shownInline(key) : key;
    const found = facts.filter(
      (f) =>
        f.slot === slot && ((f.key !== null && shownInline(f.key) === asShown) || f.id === key),
    );
    // one live value per slot and key; the newest, were there more
    return found.sort((a, b) => b.recordedAt.getTime() - a.recordedAt.getTime())[0] ?? null;
  }

  /**
   * Runs LangGraph's operations in order. Reads see one read of live memory per batch (a forget
   * honoured at once reads it again). A refused write stops the batch and its error is thrown:
   * the writes before it are done. Inside a graph, LangGraph batches the operations nodes issue
   * at once, and a batch that throws rejects each of them.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    let live: Fact[] | null = null;
    const liveFacts = async () => (live ??= await this.memory.liveFacts());
    const results: unknown[] = [];
    for (const op of operations) {
      if ('namespacePrefix' in op) {
        results.push(await this.searchOp(op, await liveFacts()));
      } else if ('value' in op) {
        if (await this.putOp(op, liveFacts)) live = null;
        results.push(undefined);
      } else if ('key' in op) {
        const f = this.find(await liveFacts(), op.namespace, op.key);
        if (f === null) this.notePending(op.namespace, op.key);
        results.push(f === null ? null : this.itemOf(f));
      } else {
        results.push(this.listOp(op, await liveFacts()));
      }
    }
    return results as OperationResults<Op>;
  }

  private async searchOp(op: SearchOperation, facts: Fact[]): Promise<MemledgerSearchItem[]> {
    const prefix = op.namespacePrefix;
    const under = (f: Fact) => {
      const ns = this.namespaceOf(f.slot);
      return prefix.length <= ns.length && prefix.every((p, i) => ns[i] === p);
    };
    const filter = op.filter ?? {};
    const kept = (item: Item) =>
      Object.entries(filter).every(([k, c]) => matches(item.value[k], c));
    const offset = count(op.offset, 'offset', 0);
    const limit = count(op.limit, 'limit', 10);
    let ranked: MemledgerSearchItem[];
    if (op.query !== undefined && op.query.trim() !== '') {
      // recall ranks; only what live memory verifies now is kept
      const byId = new Map(facts.map((f) => [f.id as string, f]));
      const recalled = await this.memory.recall(op.query, { kinds: ['fact'], k: RECALL_K });
      ranked = [];
      for (const r of recalled) {
        const f = r.kind === 'fact' ? byId.get(r.id) : undefined;
        if (f !== undefined && under(f)) ranked.push({ ...this.itemOf(f), score: r.score });
      }
    } else {
      ranked = byPassport(facts.filter(under)).map((f) => this.itemOf(f));
    }
    return ranked.filter(kept).slice(offset, offset + limit);
  }

  private listOp(op: ListNamespacesOperation, facts: Fact[]): string[][] {
    const slots = [...new Set(facts.map((f) => f.slot))];
    let spaces = slots.map((s) => this.namespaceOf(s));
    for (const c of op.matchConditions ?? []) spaces = spaces.filter((ns) => conditionHolds(c, ns));
    if (op.maxDepth !== undefined) {
      const depth = op.maxDepth;
      const seen = new Map(spaces.map((ns) => [ns.slice(0, depth).join('\0'), ns.slice(0, depth)]));
      spaces = [...seen.values()];
    }
    spaces.sort((a, b) => a.join('\0').localeCompare(b.join('\0')));
    const offset = count(op.offset, 'offset', 0);
    return spaces.slice(offset, offset + count(op.limit, 'limit', spaces.length));
  }

  /** A put: a proposal through the gate, or a forget request; true when live memory may change. */
  private async putOp(op: PutOperation, liveFacts: () => Promise<Fact[]>): Promise<boolean> {
    const namespace = [...op.namespace];
    if (op.value === null) {
      throw invalid(
        'forget',
        `memledger forgets only at the user's request, quoted: put(${JSON.stringify(namespace)}, ${JSON.stringify(op.key)}, { forget: { turn, quote } }) with the number of the user's turn asking and their words, or store.requestForget(). Nothing was forgotten; the owner honours the request`,
      );
    }
    if (!isRecord(op.value)) throw invalid('value', 'a put value is an object');
    if ('forget' in op.value) {
      const others = Object.keys(op.value).filter((k) => k !== 'forget');
      if (others.length > 0) {
        throw invalid(
          'forget',
          `a forget request is { forget: { turn, quote } } alone, not with ${others.join(', ')}`,
        );
      }
      const filed = await this.fileForget(namespace, op.key, op.value.forget, liveFacts);
      return filed.status === 'honoured';
    }
    await this.propose(namespace, op.key, op.value);
    return false;
  }

  private sessionFor(given: unknown): string {
    if (given !== undefined && typeof given !== 'string') {
      throw invalid('sessionId', 'evidence.sessionId is a string');
    }
    const sessionId = given ?? this.options.sessionId;
    if (sessionId === undefined) {
      throw invalid(
        'sessionId',
        "a memory quotes a session's user turn: name the session (evidence.sessionId, or the store's sessionId option)",
      );
    }
    return sessionId;
  }

  private async propose(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
  ): Promise<void> {
    const slot = this.slotOf(namespace);
    if (slot === null) {
      throw invalid(
        'namespace',
        `memledger keeps memories at ${JSON.stringify([...this.prefix, '<slot>'])}; ${JSON.stringify(namespace)} is not one`,
      );
    }
    const extra = Object.keys(value).filter((k) => !PUT_FIELDS.has(k));
    if (extra.length > 0) {
      throw invalid(
        extra[0] as string,
        `a memory is its text and the user's words it rests on ({ text, origin?, evidence: { sessionId?, turn, quote }, validFrom?, validTo? }): ${extra.map((k) => `'${k}'`).join(', ')} would not be kept`,
      );
    }
    const evidence = value.evidence;
    let sessionId: string;
    let cited: Record<string, unknown> | undefined;
    if (isRecord(evidence)) {
      const odd = Object.keys(evidence).filter((k) => !EVIDENCE_FIELDS.has(k));
      if (odd.length > 0) {
        throw invalid(
          'evidence',
          `evidence is { sessionId?, turn, quote } (or a tool): not ${odd.join(', ')}`,
        );
      }
      const { sessionId: given, ...rest } = evidence;
      sessionId = this.sessionFor(given);
      cited = rest;
    } else {
      sessionId = this.sessionFor(undefined);
      // anything else the gate judges, and drops with its code (NO_EVIDENCE, INVALID_PROPOSAL)
      cited = evidence === undefined ? undefined : (evidence as Record<string, unknown>);
    }
    // the gate checks every field's type and drops what is wrong with a code: pass them as given
    const proposal = {
      slot,
      key,
      text: value.text,
      origin: value.origin ?? 'saw',
      ...(cited === undefined ? {} : { evidence: cited }),
      ...(value.validFrom === undefined ? {} : { validFrom: value.validFrom }),
      ...(value.validTo === undefined ? {} : { validTo: value.validTo }),
    } as unknown as Proposal;
    const result = await this.memory.propose({ sessionId, proposals: [proposal] });
    const text = renderProposeAnswer(result);
    this.options.onAnswer?.({ kind: 'put', namespace, key, text, result });
    if (result.dropped.length > 0) throw new ProposalDropped(namespace, key, result);
    for (const p of result.proposed) {
      if (p.status === 'active') continue; // live at once by the owner's signed delegation
      this.puts.set(p.id, {
        proposalId: p.id,
        namespace,
        key,
        slot: p.slot,
        text: p.text,
        attested: p.attested,
        answer: text,
      });
      if (this.puts.size > PENDING_KEPT) {
        const oldest = this.puts.keys().next().value as string;
        this.puts.delete(oldest);
        this.noted.delete(oldest);
      }
    }
  }

  /**
   * Files a request to forget the live fact at `namespace` and `key`, quoting the user's own
   * words asking for it (`turn`: their turn's number in the session). Nothing is forgotten until
   * the owner honours it, unless the owner signed a policy that honours such requests at once.
   */
  requestForget(
    namespace: readonly string[],
    key: string,
    words: { turn: number; quote: string; sessionId?: string },
  ): Promise<FiledForget & { answer: string }> {
    return this.fileForget(namespace, key, words, () => this.memory.liveFacts());
  }

  private async fileForget(
    namespace: readonly string[],
    key: string,
    words: unknown,
    liveFacts: () => Promise<Fact[]>,
  ): Promise<FiledForget & { answer: string }> {
    const ns = checkLabels([...namespace], 'namespace');
    if (!isRecord(words) || typeof words.turn !== 'number' || typeof words.quote !== 'string') {
      throw invalid(
        'forget',
        "a forget request quotes the user's own words asking for it: { turn, quote, sessionId? }",
      );
    }
    const odd = Object.keys(words).filter((k) => !FORGET_FIELDS.has(k));
    if (odd.length > 0)
      throw invalid('forget', `forget is { turn, quote, sessionId? }: not ${odd.join(', ')}`);
    const sessionId = this.sessionFor(words.sessionId);
    const fact = this.find(await liveFacts(), ns, key);
    if (fact === null) {
      throw new EngineError(
        'FACT_NOT_FOUND',
        `no live memory at ${[...ns, key].join('/')}: a proposal still waiting is the owner's to reject, not a forget`,
        { data: { namespace: ns, key } },
      );
    }
    const filed = await this.memory.requestForget({
      sessionId,
      turn: words.turn,
      quote: words.quote,
      scope: { kind: 'fact', fact: fact.id },
    });
    const answer = renderForgetAnswer(filed);
    this.options.onAnswer?.({ kind: 'forget', namespace: ns, key, text: answer, result: filed });
    return { ...filed, answer };
  }

  /** A get found nothing live where this store's put waits: say why, once per proposal. */
  private notePending(namespace: readonly string[], key: string): void {
    for (const p of this.puts.values()) {
      if (p.key !== key || p.namespace.join('\0') !== namespace.join('\0')) continue;
      if (this.noted.has(p.proposalId)) continue;
      this.noted.add(p.proposalId);
      const text = `memledger: nothing live at ${[...namespace, key].join('/')}: this store's put of it (proposal ${p.proposalId}) waits for the owner's approval, and get and search read only what the owner approved`;
      if (this.options.onAnswer === undefined) {
        process.emitWarning(text, { code: 'MEMLEDGER_PENDING' });
      } else {
        this.options.onAnswer({ kind: 'pending', namespace: [...namespace], key, text, result: p });
      }
    }
  }

  /**
   * This store's puts that passed the gate and are not live: they wait for the owner's decision
   * (or the owner rejected them). An approved one leaves this list and shows in get and search.
   */
  async pending(): Promise<PendingPut[]> {
    if (this.puts.size === 0) return [];
    const live = new Set((await this.memory.liveFacts()).map((f) => f.id as string));
    for (const id of [...this.puts.keys()]) {
      if (!live.has(id)) continue;
      this.puts.delete(id);
      this.noted.delete(id);
    }
    return [...this.puts.values()];
  }

  /**
   * Records a graph's new messages as the session's turns, so a put can quote the user's words:
   * a human message as a user turn; a reply (its AI messages up to the one without tool calls)
   * as one assistant turn whose receipt names the tools its tool messages answered (a call that
   * failed or got no answer is named so) and the URLs their JSON output holds, or that no tools
   * ran. Tool and system messages are never turns; a reply still waiting on tools is not
   * recorded. What the store cannot keep is made storable first (a NUL or a lone surrogate shown
   * as U+FFFD, a tool name it refuses as `unnamed_tool`, a URL it refuses left out, a receipt the
   * reply imitates cut), so no message's content stops the batch. Pass only messages not recorded
   * before: recording is not idempotent.
   */
  async recordMessages(
    messages: readonly BaseMessage[],
    options: { sessionId?: string } = {},
  ): Promise<RecordedMessage[]> {
    const sessionId = this.sessionFor(options.sessionId);
    await this.ensureSession(sessionId);
    const out: RecordedMessage[] = [];
    let rounds: Blocks[] = [];
    let calls: Array<{ id: string; name: unknown }> = [];
    const results = new Map<string, { error: boolean; content: unknown }>();
    for (const m of messages) {
      const type = (m as { type?: unknown }).type;
      if (type === 'human') {
        rounds = [];
        calls = [];
        const text = storableText(joinRounds([blocksOf(m)]));
        if (text.trim() === '') continue;
        const r = await this.memory.addTurn({ sessionId, role: 'user', content: text });
        out.push({ role: 'user', ...r });
      } else if (type === 'tool') {
        const t = m as BaseMessage & { tool_call_id?: string; status?: string };
        if (typeof t.tool_call_id === 'string') {
          results.set(t.tool_call_id, { error: t.status === 'error', content: t.content });
        }
      } else if (type === 'ai') {
        const a = m as BaseMessage & { tool_calls?: unknown };
        rounds.push(blocksOf(m));
        const asked: unknown[] = Array.isArray(a.tool_calls) ? a.tool_calls : [];
        for (const [i, c] of asked.entries()) {
          const id = isRecord(c) && typeof c.id === 'string' ? c.id : `${m.id ?? ''}#${i}`;
          calls.push({ id, name: isRecord(c) ? c.name : undefined });
        }
        if (asked.length > 0) continue; // the reply goes on after its tools answer
        const reply = replyOf(joinRounds(rounds), calls, results);
        rounds = [];
        calls = [];
        if (reply === null) continue;
        const r = await this.memory.addTurn({ sessionId, role: 'assistant', ...reply });
        out.push({ role: 'assistant', ...r });
      }
    }
    return out;
  }

  private async ensureSession(sessionId: string): Promise<void> {
    if (this.knownSessions.has(sessionId)) return;
    await ensureSession(this.memory, sessionId, this.options.title ?? sessionId);
    this.knownSessions.add(sessionId);
    // a long-lived store forgets the oldest first: one it forgot is looked up again
    while (this.knownSessions.size > SESSIONS_KEPT) {
      this.knownSessions.delete(this.knownSessions.values().next().value as string);
    }
  }
}

/**
 * A reply as the store keeps it, from its text, its tool calls and the tool messages that
 * answered them (`storableReply`), or null when it holds nothing to record.
 */
function replyOf(
  text: string,
  calls: ReadonlyArray<{ id: string; name: unknown }>,
  results: ReadonlyMap<string, { error: boolean; content: unknown }>,
): ReturnType<typeof storableReply> {
  const tools: string[] = [];
  const sources = new Set<string>();
  for (const call of calls) {
    const r = results.get(call.id);
    const outcome: CallOutcome = r === undefined ? 'no result' : r.error ? 'error' : 'ran';
    tools.push(toolLabel(call.name, outcome));
    if (outcome === 'ran' && typeof r?.content === 'string') {
      try {
        collectUrls(JSON.parse(r.content), sources);
      } catch {
        // not JSON: no sources read from it
      }
    }
  }
  return storableReply({ text, tools, sources });
}
