import { ServerError } from '../server-errors.js';
import type { TokenRole } from '../../src/index.js';
import { renderForgetAnswer } from '../../src/rules.js';
import { z } from '@hono/zod-openapi';
import {
  Fact,
  ForgetRequest,
  ForgetScope,
  IntegrityReport,
  ProbeRecord,
  Retraction,
  Session,
  Slot,
  UtilityUsage,
} from '../http/entities.js';
import { Id, LIMITS, pageQuery, text } from '../http/schemas.js';
import { defineCall, type OperationSpec } from './operation.js';
import type { FactId, RetractionId } from '../../src/index.js';

/**
 * Every operation a token can run through a face, the least role that may run it, and where each
 * face reaches it: the one table. The HTTP routes and the OpenAPI document, the MCP tools, prompt
 * and resource, the role table in docs/SERVER.md and the reference in docs/API.md are made from it
 * (`npm run docs:operations` writes the two docs; a test fails when they differ). The owner's powers
 * (decide, delegate, declare slots, tokens, the owner key, tool registration, a settle by verdict,
 * export, import, backup, restore and move) are not operations: no token can reach them through
 * any face.
 */
export const OPERATION_TABLE = [
  // reading
  {
    name: 'sessions.list',
    role: 'reader',
    doc: "The subject's sessions, newest first",
    http: { method: 'get', path: '/v1/sessions', tag: 'sessions' },
    mcp: { tools: ['list_sessions'] },
  },
  {
    name: 'sessions.get',
    role: 'reader',
    doc: 'One session',
    http: { method: 'get', path: '/v1/sessions/{sessionId}', tag: 'sessions' },
    call: defineCall({
      input: z.strictObject({ sessionId: Id }),
      output: Session,
      readOnly: true,
      run: (me, { sessionId }) => me.sessions.get(sessionId),
    }),
  },
  {
    name: 'history.turns',
    role: 'reader',
    doc: "The session's turns as JSON, in order, a page at a time",
    http: { method: 'get', path: '/v1/sessions/{sessionId}/turns', tag: 'sessions' },
  },
  {
    name: 'history.render',
    role: 'reader',
    doc: 'The transcript as text, each receipt beside its turn',
    http: { method: 'get', path: '/v1/sessions/{sessionId}/history', tag: 'sessions' },
    mcp: { tools: ['read_history'] },
  },
  {
    name: 'history.messages',
    role: 'reader',
    doc: 'The history as chat-completion messages, receipts as system messages',
    http: { method: 'get', path: '/v1/sessions/{sessionId}/messages', tag: 'sessions' },
  },
  {
    name: 'history.usage',
    role: 'reader',
    doc: 'Utility generations counted in the session (never recorded as turns)',
    http: { method: 'get', path: '/v1/sessions/{sessionId}/usage', tag: 'sessions' },
    call: defineCall({
      input: z.strictObject({ sessionId: Id }),
      output: z.object({ usage: z.array(UtilityUsage) }),
      readOnly: true,
      run: async (me, { sessionId }) => ({ usage: await me.history.usage(sessionId) }),
    }),
  },
  {
    name: 'gate.pileCount',
    role: 'reader',
    doc: "How many proposals await the owner's decision",
    http: { method: 'get', path: '/v1/pile/count', tag: 'gate' },
    call: defineCall({
      input: z.strictObject({}),
      output: z.object({ count: z.number().int() }),
      readOnly: true,
      run: async (me) => ({ count: await me.gate.pileCount() }),
    }),
  },
  {
    name: 'facts.live',
    role: 'reader',
    doc: "Live memory: only facts the owner's signatures back, each with its passport",
    http: { method: 'get', path: '/v1/facts', tag: 'gate' },
    mcp: { tools: ['list_memories'] },
  },
  {
    name: 'facts.get',
    role: 'reader',
    doc: 'One fact or proposal by id, whatever its status, with its passport',
    http: { method: 'get', path: '/v1/facts/{factId}', tag: 'gate' },
    call: defineCall({
      input: z.strictObject({ factId: Id }),
      output: Fact,
      readOnly: true,
      run: (me, { factId }) => me.facts.get(factId as FactId),
    }),
  },
  {
    name: 'facts.integrity',
    role: 'reader',
    doc: "What failed verification against the owner's chain, if anything",
    http: { method: 'get', path: '/v1/facts/integrity', tag: 'gate' },
    call: defineCall({
      input: z.strictObject({}),
      output: IntegrityReport,
      readOnly: true,
      run: (me) => me.facts.integrity(),
    }),
  },
  {
    name: 'slots.list',
    role: 'reader',
    doc: 'The declared slots (auto-live only where a verified owner delegation says so)',
    http: { method: 'get', path: '/v1/slots', tag: 'gate' },
    call: defineCall({
      input: z.strictObject({}),
      output: z.object({ slots: z.array(Slot) }),
      readOnly: true,
      run: async (me) => ({ slots: await me.slots.list() }),
    }),
  },
  {
    name: 'ledger.list',
    role: 'reader',
    doc: "The subject's retractions, optionally of one verdict",
    http: { method: 'get', path: '/v1/retractions', tag: 'ledger' },
  },
  {
    name: 'ledger.get',
    role: 'reader',
    doc: 'One retraction',
    http: { method: 'get', path: '/v1/retractions/{retractionId}', tag: 'ledger' },
    call: defineCall({
      input: z.strictObject({ retractionId: Id }),
      output: Retraction,
      readOnly: true,
      run: (me, { retractionId }) => me.ledger.get(retractionId as RetractionId),
    }),
  },
  {
    name: 'ledger.due',
    role: 'reader',
    doc: 'Unchecked falsifiers whose maturity date has passed',
    http: { method: 'get', path: '/v1/retractions/due', tag: 'ledger' },
  },
  {
    name: 'arrival.assemble',
    role: 'reader',
    doc: 'Assembles the context for a surface (and session, and incoming message) and records its manifest',
    http: { method: 'post', path: '/v1/arrival', tag: 'arrival' },
    mcp: { tools: ['get_arrival'], prompts: ['arrival'], resources: ['arrival'] },
  },
  {
    name: 'arrival.diff',
    role: 'reader',
    doc: 'What changed between an arrival (by id, or the latest on a surface) and the one before',
    http: { method: 'get', path: '/v1/arrival/diff', tag: 'arrival' },
  },
  {
    name: 'commitments.list',
    role: 'reader',
    doc: 'Commitments, newest first, optionally of one status',
    http: { method: 'get', path: '/v1/commitments', tag: 'commitments' },
    mcp: { tools: ['list_commitments'] },
  },
  {
    name: 'tools.list',
    role: 'reader',
    doc: 'The registered tools (registering is the owner’s, from the CLI)',
    http: { method: 'get', path: '/v1/tools', tag: 'tools' },
  },
  {
    name: 'recall.search',
    role: 'reader',
    doc: 'Ranked turns and facts for a query, each with its passport; reads only',
    http: { method: 'get', path: '/v1/recall', tag: 'recall' },
    mcp: { tools: ['recall'] },
  },
  {
    name: 'reflection.list',
    role: 'reader',
    doc: 'Past reflection runs, newest first, optionally of one session',
    http: { method: 'get', path: '/v1/reflections', tag: 'reflection' },
  },
  {
    name: 'reflection.outcomes',
    role: 'reader',
    doc: "Per prompt version and slot, what the runs' proposals became: dropped per code, pending, live, rejected",
    http: { method: 'get', path: '/v1/reflections/outcomes', tag: 'reflection' },
  },
  {
    name: 'summaries.list',
    role: 'reader',
    doc: 'Past summaries, newest first, optionally of one aspect, with every sentence’s verdict',
    http: { method: 'get', path: '/v1/summaries', tag: 'summaries' },
  },
  // the agent's work
  {
    name: 'sessions.create',
    role: 'agent',
    doc: 'Starts a session',
    http: { method: 'post', path: '/v1/sessions', tag: 'sessions' },
    mcp: { tools: ['start_session'] },
  },
  {
    name: 'turns.add',
    role: 'agent',
    doc: 'Records a turn with its receipt (or counts a utility generation)',
    http: { method: 'post', path: '/v1/sessions/{sessionId}/turns', tag: 'sessions' },
    mcp: { tools: ['record_turn'] },
  },
  {
    name: 'turns.recordResponse',
    role: 'agent',
    doc: 'Records a model response from its content blocks (text joined, receipt from tool blocks)',
    http: { method: 'post', path: '/v1/sessions/{sessionId}/responses', tag: 'sessions' },
  },
  {
    name: 'gate.propose',
    role: 'agent',
    doc: "Proposes memories citing a session's user turns; what passes waits for the owner",
    http: { method: 'post', path: '/v1/proposals', tag: 'gate' },
    mcp: { tools: ['propose_memories'] },
  },
  {
    name: 'gate.pile',
    role: 'agent',
    doc: "Proposals awaiting the owner's decision, each with the turn it cites",
    http: { method: 'get', path: '/v1/pile', tag: 'gate' },
  },
  {
    name: 'gate.dropped',
    role: 'agent',
    doc: 'Dropped proposals, newest first, each with its code',
    http: { method: 'get', path: '/v1/dropped', tag: 'gate' },
  },
  {
    name: 'gate.requestForget',
    role: 'agent',
    doc: "Asks to forget something, quoting the user's own words asking; honoured at once where a standing policy allows it, else it waits to be honoured",
    http: { method: 'post', path: '/v1/forget-requests', tag: 'gate' },
    mcp: { tools: ['request_forget'] },
    call: defineCall({
      input: z.strictObject({
        sessionId: Id,
        turn: z.int().min(1).max(LIMITS.maxInt).describe('the user turn that asks (its number)'),
        quote: text(LIMITS.field).min(1).describe('the user’s own words asking, as in that turn'),
        scope: ForgetScope.describe(
          'what to forget: a turn, a session, a fact, every trace of a phrase, or everything',
        ),
      }),
      output: ForgetRequest.extend({
        waits: z.string().optional().describe('why it is not forgotten yet, when it is not'),
      }),
      readOnly: false,
      run: (me, input) => me.gate.requestForget({ ...input, requestedBy: 'agent' }),
      text: (r) => renderForgetAnswer(r),
    }),
  },
  {
    name: 'gate.forgetRequests',
    role: 'agent',
    doc: 'Forget requests, newest first, with what became of each',
    http: { method: 'get', path: '/v1/forget-requests', tag: 'gate' },
    call: defineCall({
      input: z.strictObject({ ...pageQuery }),
      output: z.object({ requests: z.array(ForgetRequest) }),
      readOnly: true,
      run: async (me, { limit, offset }) => ({
        requests: await me.gate.forgetRequests({
          ...(limit === undefined ? {} : { limit }),
          ...(offset === undefined ? {} : { offset }),
        }),
      }),
    }),
  },
  {
    name: 'ledger.retract',
    role: 'agent',
    doc: 'Records a typed retraction with a falsifier whose polarity is checked',
    http: { method: 'post', path: '/v1/retractions', tag: 'ledger' },
    mcp: { tools: ['retract_claim'] },
  },
  {
    name: 'ledger.settleByProbe',
    role: 'agent',
    doc: "Settles a due falsifier by running its calibrated probe (a verdict is the owner's)",
    http: { method: 'post', path: '/v1/retractions/{retractionId}/settle', tag: 'ledger' },
  },
  {
    name: 'probes.run',
    role: 'agent',
    doc: 'Runs a structured probe (file, sql, http) and records it',
    http: { method: 'post', path: '/v1/probes/run', tag: 'probes' },
    mcp: { tools: ['run_probe'] },
  },
  {
    name: 'probes.calibrate',
    role: 'agent',
    doc: "Runs each instrument's positive and negative controls (or one instrument's)",
    http: { method: 'post', path: '/v1/probes/calibrate', tag: 'probes' },
  },
  {
    name: 'probes.log',
    role: 'agent',
    doc: "The subject's probe records, newest first",
    http: { method: 'get', path: '/v1/probes/log', tag: 'probes' },
  },
  {
    name: 'probes.get',
    role: 'agent',
    doc: 'One probe record',
    http: { method: 'get', path: '/v1/probes/{recordId}', tag: 'probes' },
    call: defineCall({
      input: z.strictObject({ recordId: Id }),
      output: ProbeRecord,
      readOnly: true,
      run: (me, { recordId }) => me.probes.get(recordId),
    }),
  },
  {
    name: 'commitments.add',
    role: 'agent',
    doc: 'Records an open commitment',
    http: { method: 'post', path: '/v1/commitments', tag: 'commitments' },
    mcp: { tools: ['add_commitment'] },
  },
  {
    name: 'commitments.done',
    role: 'agent',
    doc: 'Marks an open commitment done',
    http: { method: 'post', path: '/v1/commitments/{commitmentId}/done', tag: 'commitments' },
    mcp: { tools: ['complete_commitment'] },
  },
  {
    name: 'commitments.drop',
    role: 'agent',
    doc: 'Drops an open commitment',
    http: { method: 'post', path: '/v1/commitments/{commitmentId}/drop', tag: 'commitments' },
  },
  {
    name: 'actions.record',
    role: 'agent',
    doc: 'Records what the agent did through a tool (confirmed ones show on arrival)',
    http: { method: 'post', path: '/v1/actions', tag: 'actions' },
    mcp: { tools: ['record_action'] },
  },
  // proposes, like gate.propose: what passes waits in the pile for the owner
  {
    name: 'reflection.reflect',
    role: 'agent',
    doc: "Runs memledger's reflection on a session: the server's model proposes, the gate checks, the pile waits for the owner",
    http: { method: 'post', path: '/v1/sessions/{sessionId}/reflect', tag: 'reflection' },
  },
  // writes only to the pile, like gate.propose: a summary is live only by the owner's decision
  {
    name: 'summaries.summarize',
    role: 'agent',
    doc: "Writes a summary aspect with the server's model: every sentence checked against the turns it cites, the supported ones to the pile",
    http: { method: 'post', path: '/v1/summaries', tag: 'summaries' },
  },
] as const satisfies readonly OperationSpec[];

/** One of the operations of the table. */
export type Operation = (typeof OPERATION_TABLE)[number]['name'];

/** Each operation of the table and the least role that may run it. */
export const OPERATIONS = Object.fromEntries(
  OPERATION_TABLE.map((op) => [op.name, op.role]),
) as Readonly<Record<Operation, TokenRole>>;

/** The table's entry for an operation. */
export function operationSpec(name: Operation): OperationSpec {
  const spec = OPERATION_TABLE.find((op) => op.name === name);
  if (spec === undefined) throw new Error(`no operation ${name} in the table`);
  return spec;
}

/** What each role may do, in order of power: an agent may do all a reader may. */
const RANK: Readonly<Record<TokenRole, number>> = { reader: 0, agent: 1 };

/** Whether `role` may run `op`. */
export function mayRun(role: TokenRole, op: Operation): boolean {
  return RANK[role] >= RANK[OPERATIONS[op]];
}

/** Whether `role` may run an operation of a table (the MCP face lists only those). */
export function mayRunSpec(role: TokenRole, op: Pick<OperationSpec, 'role'>): boolean {
  return RANK[role] >= RANK[op.role];
}

/** ROLE_FORBIDDEN unless the caller's role may run the operation. */
export function requireRole(
  caller: { role: TokenRole },
  op: Pick<OperationSpec, 'name' | 'role'>,
): void {
  if (!mayRunSpec(caller.role, op)) {
    throw new ServerError(
      'ROLE_FORBIDDEN',
      `a ${caller.role} token may not run ${op.name} (it needs an ${op.role} token)`,
      { data: { operation: op.name, role: caller.role, needs: op.role } },
    );
  }
}

/** ROLE_FORBIDDEN unless the caller's role may run `op`. */
export function requireOperation(caller: { role: TokenRole }, op: Operation): void {
  requireRole(caller, { name: op, role: OPERATIONS[op] });
}
