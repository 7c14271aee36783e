import { ServerError } from './server-errors.js';
import type { TokenRole } from '../src/index.js';

/**
 * What each face may run, and the least role that may run it. Every HTTP route and every MCP tool
 * names one operation here; `test/server-*-roles.test.ts` enumerate them against this table. The
 * owner's powers (decide, delegate, declare slots, tokens, the owner key, tool registration, a
 * settle by verdict) are not operations: no token can reach them through any face.
 */
export const OPERATIONS = {
  // reading
  'sessions.list': 'reader',
  'sessions.get': 'reader',
  'history.turns': 'reader',
  'history.render': 'reader',
  'history.messages': 'reader',
  'history.usage': 'reader',
  'gate.pileCount': 'reader',
  'facts.live': 'reader',
  'facts.get': 'reader',
  'facts.integrity': 'reader',
  'slots.list': 'reader',
  'ledger.list': 'reader',
  'ledger.get': 'reader',
  'ledger.due': 'reader',
  'arrival.assemble': 'reader',
  'arrival.diff': 'reader',
  'commitments.list': 'reader',
  'tools.list': 'reader',
  'recall.search': 'reader',
  'reflection.list': 'reader',
  'reflection.outcomes': 'reader',
  'summaries.list': 'reader',
  // the agent's work
  'sessions.create': 'agent',
  'turns.add': 'agent',
  'turns.recordResponse': 'agent',
  'gate.propose': 'agent',
  'gate.pile': 'agent',
  'gate.dropped': 'agent',
  'ledger.retract': 'agent',
  'ledger.settleByProbe': 'agent',
  'probes.run': 'agent',
  'probes.calibrate': 'agent',
  'probes.log': 'agent',
  'probes.get': 'agent',
  'commitments.add': 'agent',
  'commitments.done': 'agent',
  'commitments.drop': 'agent',
  'actions.record': 'agent',
  // proposes, like gate.propose: what passes waits in the pile for the owner
  'reflection.reflect': 'agent',
  // writes only to the pile, like gate.propose: a summary is live only by the owner's decision
  'summaries.summarize': 'agent',
} as const satisfies Readonly<Record<string, TokenRole>>;

/** One of the operations a face may run. */
export type Operation = keyof typeof OPERATIONS;

/** What each role may do, in order of power: an agent may do all a reader may. */
const RANK: Readonly<Record<TokenRole, number>> = { reader: 0, agent: 1 };

/** Whether `role` may run `op`. */
export function mayRun(role: TokenRole, op: Operation): boolean {
  return RANK[role] >= RANK[OPERATIONS[op]];
}

/** ROLE_FORBIDDEN unless the caller's role may run `op`. */
export function requireOperation(caller: { role: TokenRole }, op: Operation): void {
  if (!mayRun(caller.role, op)) {
    throw new ServerError(
      'ROLE_FORBIDDEN',
      `a ${caller.role} token may not run ${op} (it needs an ${OPERATIONS[op]} token)`,
      { data: { operation: op, role: caller.role, needs: OPERATIONS[op] } },
    );
  }
}
