import { verdictNow } from '../domain/attestation.js';
import { DECISIONS, type ChainCrypto, type DelegationBound } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import {
  checkString,
  invalidField,
  optionalBoolean,
  optionalString,
  optionalStringList,
  optionalWhole,
  pageOf,
} from '../domain/input.js';
import { hasIntegrityProblem, integrityLines, viewIndex, type TrustView } from '../domain/trust.js';
import type { OwnerAnchor } from '../domain/anchor.js';
import {
  DEFAULT_SLOTS,
  SLOT_NAME,
  SLOT_RULES,
  SUMMARY_SCOPES,
  type Fact,
  type SlotDeclaration,
  type SummaryScope,
} from '../domain/fact.js';
import { DEFAULT_CORRECTION_CUES, DEFAULT_FAILURE_CUES } from '../domain/gate-rules.js';
import { sessionNotFound } from '../domain/session.js';
import { requireId, type Turn } from '../domain/turn.js';
import { parseChoice } from '../domain/vocabulary.js';
import { DroppedSql } from '../store/dropped-sql.js';
import { FactSql } from '../store/fact-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { RetractionSql } from '../store/retraction-sql.js';
import { SessionSql } from '../store/session-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TurnSql } from '../store/turn-sql.js';
import type { FactsApi, GateApi, OwnerApi, PendingProposal, SlotsApi } from './gate-types.js';
import { FORGET_REQUEST_STATUSES, readForgetScope, type ForgetRequest } from '../domain/forget.js';
import { quoteFoundIn } from '../domain/text/fold.js';
import { INPUT_LIMITS } from '../domain/input.js';
import { ForgetRequestSql } from '../store/forget-request-sql.js';
import { GateTurnSql } from '../store/gate-turn-sql.js';
import { approveEdited } from './owner-edit.js';
import { OwnerDecisions } from './owner-decisions.js';
import { PolicyForgets } from './policy-forget.js';
import { readRetainDays } from '../domain/forget-policy.js';
import type { Trust } from '../trust/trust-types.js';
import { ProposalGate, type GateConfig } from './proposal-gate.js';

export interface GateModuleDeps extends ModuleDeps {
  crypto: ChainCrypto;
  /** The store's id: the anchored head recorded for it is the one checked. */
  storeId: string;
  /** What reads may show: one verifier per engine, shared with arrival and recall. */
  trust: Trust;
  config?: Partial<GateConfig>;
  /** The subject's time zone (arrival's), in which the dropped log is counted by day. */
  timeZoneOf: (subjectId: string) => Promise<string>;
}

export interface GateModule {
  gate(subjectId: string): GateApi;
  owner(subjectId: string): OwnerApi;
  slots(subjectId: string): SlotsApi;
  facts(subjectId: string): FactsApi;
  /** The gate itself, for engine modules that propose in a transaction of their own making. */
  readonly proposalGate: ProposalGate;
  /** Appends the owner's signed revocation of a token (the tokens module's `revoke`). */
  revokeToken: OwnerDecisions['revokeToken'];
  /** Signs a retraction the ledger writes in the same transaction (`ledger.retract` with a signer). */
  signRetraction: OwnerDecisions['retract'];
}

/** What a delegation lets a receipt-promoted fact say when the owner names no bound. */
export const DEFAULT_DELEGATION_MAX_CHARS = 200;
/** The longest bound a delegation may sign, and the longest template. */
const MAX_BOUND_CHARS = 2_000;
const MAX_TEMPLATE_CHARS = 500;

/** A delegation's bound from its input: none for a revocation, the default when not named. */
function delegationBound(
  input: { maxChars?: unknown; template?: unknown },
  autoLive: boolean,
): DelegationBound | null {
  if (!autoLive) {
    if (input.maxChars !== undefined || input.template !== undefined) {
      throw invalidField('maxChars', 'a revoked delegation bounds nothing');
    }
    return null;
  }
  const maxChars = input.maxChars ?? DEFAULT_DELEGATION_MAX_CHARS;
  if (
    !Number.isSafeInteger(maxChars) ||
    (maxChars as number) < 1 ||
    (maxChars as number) > MAX_BOUND_CHARS
  ) {
    throw invalidField('maxChars', `must be a whole number from 1 to ${MAX_BOUND_CHARS}`);
  }
  const template = input.template ?? null;
  if (
    template !== null &&
    (typeof template !== 'string' ||
      template.length === 0 ||
      template.length > MAX_TEMPLATE_CHARS ||
      /[\n\r\u2028\u2029]/u.test(template))
  ) {
    throw invalidField(
      'template',
      `must be one line of 1 to ${MAX_TEMPLATE_CHARS} characters, with {} where a fact's own words go`,
    );
  }
  return { maxChars: maxChars as number, template };
}

/** A fact or proposal id as a caller names it: a non-empty string the store can hold. */
function requireFactId(id: unknown, field: string): void {
  if (typeof id !== 'string' || id === '') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `a ${field === 'factId' ? 'fact' : 'proposal'} id is required`,
      {
        data: { field },
      },
    );
  }
  checkString(id, field, 256);
}
const DEFAULT_DROPPED_PAGE = 100;
const DEFAULT_PILE_PAGE = 100;
const DEFAULT_DROPPED_DAYS = 14;
const MAX_DROPPED_DAYS = 366;
const ALL_STATUSES: readonly Fact['status'][] = [
  'active',
  'proposed',
  'rejected',
  'superseded',
  'retracted',
  'expired',
  'unverified',
];

/** Declares the default slots for a new subject. */
export async function declareDefaultSlots(
  db: SqlExecutor,
  subjectId: string,
  at: Date,
): Promise<void> {
  const slots = new SlotSql(db);
  for (const slot of DEFAULT_SLOTS) await slots.declare(subjectId, slot, at);
}

function requireSigner(signer: unknown): void {
  if (
    typeof signer !== 'object' ||
    signer === null ||
    typeof (signer as { keyId?: unknown }).keyId !== 'string' ||
    typeof (signer as { publicKeyPem?: unknown }).publicKeyPem !== 'string' ||
    typeof (signer as { sign?: unknown }).sign !== 'function'
  ) {
    throw invalidField('signer', 'must be the owner signer from loadOwnerKey');
  }
}

/**
 * How reads may show a fact stored as live: the verified copy, expired, or `unverified` with the
 * reason. Indexed once per view, so labelling every fact of a subject is one pass.
 */
function trustedReader(view: TrustView): (f: Fact) => Fact {
  const { live, expired, withheld } = viewIndex(view);
  return (f) => {
    if (f.status !== 'active') return f;
    // the verified copy, never the row as read now (it may have changed since the view)
    const verified = live.get(f.id);
    if (verified !== undefined) return verified;
    const ended = expired.get(f.id);
    if (ended !== undefined) return { ...ended, status: 'expired' };
    const w = withheld.get(f.id);
    return {
      ...f,
      status: 'unverified',
      integrity:
        w === undefined
          ? { code: 'MISSING_DECISION', reason: 'it went live after the trust view was read' }
          : { code: w.code, reason: w.reason },
    };
  };
}

/** The write gate, the owner's decisions, slots and facts, each bound to one subject. */
export function createGateModule(deps: GateModuleDeps): GateModule {
  const { client, clock } = deps;
  const slots = new SlotSql(client);
  const facts = new FactSql(client);
  const dropped = new DroppedSql(client);
  const subjects = new SubjectSql(client);
  const sessions = new SessionSql(client);
  const turns = new TurnSql(client);
  const { trust } = deps;
  const gate = new ProposalGate({
    client,
    clock,
    newId: deps.newId,
    trust,
    config: {
      correctionCues: deps.config?.correctionCues ?? DEFAULT_CORRECTION_CUES,
      failureCues: deps.config?.failureCues ?? DEFAULT_FAILURE_CUES,
    },
  });
  const decisions = new OwnerDecisions(client, deps.crypto, clock, trust);
  const policies = new PolicyForgets(client, trust, clock, deps.newId, deps.crypto);

  /** Slots as declared, auto-live only where a verified delegation link says so. */
  const listSlots = async (subjectId: string) => {
    const declared = await slots.list(subjectId);
    const state = await trust.withSubject(subjectId, (held) => held.chain(client));
    return declared.map((s) => {
      const d = state.delegations.get(s.name);
      const autoLive = s.rule === 'action' && d !== undefined && d.autoLive;
      return {
        name: s.name,
        rule: s.rule,
        autoLive,
        tools: autoLive && d !== undefined ? [...d.tools] : [],
        ...(s.scope === undefined ? {} : { scope: s.scope }),
      };
    });
  };

  const citedTurnOf = async (subjectId: string, fact: Fact): Promise<Turn | null> => {
    if (fact.evidence.sessionId === null || fact.evidence.seq === null) return null;
    const [turn] = await turns.listBySession(subjectId, fact.evidence.sessionId, {
      afterSeq: fact.evidence.seq - 1,
      limit: 1,
    });
    return turn ?? null;
  };

  return {
    proposalGate: gate,
    revokeToken: (input) => decisions.revokeToken(input),
    signRetraction: async (input) => {
      requireSigner(input.signer);
      return decisions.retract(input);
    },
    gate: (subjectId) => ({
      async propose(input) {
        const sessionId = requireId(input.sessionId, 'session');
        if ((await sessions.ofSubject(subjectId, sessionId)) === null)
          throw sessionNotFound(sessionId);
        if (!Array.isArray(input.proposals)) {
          throw new EngineError('INVALID_ARGUMENT', 'proposals must be an array', {
            data: { field: 'proposals' },
          });
        }
        return gate.propose({
          sessionId,
          subjectId,
          proposals: input.proposals,
          proposedBy: optionalString(input.proposedBy, 'proposedBy') ?? 'host',
        });
      },
      async pile(options) {
        // no options: the whole pile, as before; a page when limit or offset is given
        const page = options === undefined ? undefined : pageOf(options, DEFAULT_PILE_PAGE);
        const out: PendingProposal[] = [];
        for (const fact of await facts.byStatus(subjectId, ['proposed'], page)) {
          const citedTurn = await citedTurnOf(subjectId, fact);
          // every quoted claim citing a user turn is read again, a row stored without a verdict
          // too (flagged attested, it claims "asserted"); actions and summaries have no quote verdict
          const now = verdictNow(
            { origin: fact.origin, text: fact.text, quote: fact.evidence.quote },
            citedTurn,
          );
          out.push({ fact, citedTurn, verdictNow: now });
        }
        return out;
      },
      async dropped(options = {}) {
        return dropped.list(subjectId, pageOf(options, DEFAULT_DROPPED_PAGE));
      },
      async requestForget(input) {
        const sessionId = requireId(input.sessionId, 'session');
        if ((await sessions.ofSubject(subjectId, sessionId)) === null)
          throw sessionNotFound(sessionId);
        const turn = optionalWhole(input.turn, 'turn', 1);
        if (turn === undefined)
          throw invalidField('turn', 'name the user turn that asks (its number)');
        const quote = optionalString(input.quote, 'quote', INPUT_LIMITS.quoteLength);
        if (quote === undefined || quote.trim() === '') {
          throw invalidField('quote', "must quote the user's own words asking to forget");
        }
        const scope = readForgetScope(input.scope);
        const requestedBy = optionalString(input.requestedBy, 'requestedBy') ?? 'host';
        const cited = await new GateTurnSql(client).cited(subjectId, sessionId, turn);
        if (cited === null)
          throw invalidField('turn', `session "${sessionId}" has no turn ${turn}`);
        if (cited.forgotten === true) throw invalidField('turn', `turn ${turn} is forgotten`);
        if (cited.role !== 'user') {
          throw invalidField(
            'turn',
            `turn ${turn} is the ${cited.role}'s: a forget request quotes the user's own words`,
          );
        }
        if (!quoteFoundIn(quote, cited.content)) {
          throw invalidField('quote', `turn ${turn} does not say these words`);
        }
        const store = new ForgetRequestSql(client);
        const filed = await store.insert({
          id: deps.newId(),
          subjectId,
          sessionId,
          turn,
          quote,
          scope,
          requestedBy,
          at: clock(),
        });
        // honoured at once when the owner's policy allows it; else it waits, and says why
        const { waits } = await policies.honour(subjectId, filed.id);
        const now = (await store.get(subjectId, filed.id)) ?? filed;
        return waits === null ? now : { ...now, waits };
      },
      async forgetRequests(options = {}) {
        const status =
          options.status === undefined
            ? undefined
            : parseChoice(FORGET_REQUEST_STATUSES, options.status, 'status');
        return new ForgetRequestSql(client).list(
          subjectId,
          status,
          pageOf(options, DEFAULT_DROPPED_PAGE),
        );
      },
      pileCount: () => facts.countByStatus(subjectId, ['proposed']),
      droppedCount: () => dropped.count(subjectId),
      async droppedByDay(options = {}) {
        const days =
          optionalWhole(options.days, 'days', 1, MAX_DROPPED_DAYS) ?? DEFAULT_DROPPED_DAYS;
        const zone = await deps.timeZoneOf(subjectId);
        return dropped.byDay(subjectId, clock(), zone, days);
      },
    }),
    owner: (subjectId) => ({
      async forget(input) {
        const requestId = optionalString(input.request, 'request');
        if ((requestId === undefined) === (input.scope === undefined)) {
          throw invalidField('scope', 'name what to forget (scope), or the request to honour');
        }
        const withFacts = optionalBoolean(input.withFacts, 'withFacts');
        requireSigner(input.signer);
        let request: ForgetRequest | null = null;
        if (requestId !== undefined) {
          request = await new ForgetRequestSql(client).get(subjectId, requestId);
          if (request === null) {
            throw new EngineError('FORGET_REQUEST_NOT_FOUND', `no forget request "${requestId}"`);
          }
          if (request.status !== 'pending') {
            throw new EngineError(
              'NOT_PENDING',
              `forget request "${requestId}" is ${request.status}`,
            );
          }
        }
        return decisions.forget({
          subjectId,
          scope: readForgetScope(request === null ? input.scope : request.scope),
          withFacts: withFacts === true,
          forgetId: deps.newId(),
          signer: input.signer,
          ...(request === null ? {} : { request: request.id }),
        });
      },
      async declineForget(input) {
        const requestId = optionalString(input.request, 'request');
        if (requestId === undefined) throw invalidField('request', 'name the request to decline');
        const store = new ForgetRequestSql(client);
        const found = await store.get(subjectId, requestId);
        if (found === null) {
          throw new EngineError('FORGET_REQUEST_NOT_FOUND', `no forget request "${requestId}"`);
        }
        if (!(await store.decline(subjectId, requestId, clock()))) {
          throw new EngineError('NOT_PENDING', `forget request "${requestId}" is ${found.status}`);
        }
        return (await store.get(subjectId, requestId)) as ForgetRequest;
      },
      forgetPlan: (scope) => decisions.forgetPlan(subjectId, readForgetScope(scope)),
      async setForgetPolicy(input) {
        const honour = optionalBoolean(input.honourRequests, 'honourRequests');
        const days =
          input.retainDays === undefined || input.retainDays === null
            ? input.retainDays
            : readRetainDays(input.retainDays);
        requireSigner(input.signer);
        return decisions.setForgetPolicy({
          subjectId,
          policy: {
            ...(honour === undefined ? {} : { honourRequests: honour }),
            ...(days === undefined ? {} : { retainDays: days }),
          },
          signer: input.signer,
        });
      },
      forgetPolicy: () => policies.policy(subjectId),
      retentionPlan: () => policies.retentionPlan(subjectId),
      applyRetention: () => policies.applyRetention(subjectId),
      async retract(input) {
        const retractionId: unknown = input.retractionId;
        if (typeof retractionId !== 'string' || retractionId.trim() === '') {
          throw invalidField('retractionId', 'name the retraction to sign');
        }
        const factId = optionalString(input.factId, 'factId');
        requireSigner(input.signer);
        return decisions.retract({
          subjectId,
          signer: input.signer,
          ...(factId === undefined ? {} : { factId }),
          row: async (tx) => {
            const row = await new RetractionSql(tx).get(subjectId, retractionId);
            if (row === null) {
              throw new EngineError('RETRACTION_NOT_FOUND', `no retraction "${retractionId}"`);
            }
            return row;
          },
        });
      },
      async decide(input) {
        requireFactId(input.proposalId, 'proposalId');
        const decision = parseChoice(DECISIONS, input.decision, 'decision');
        optionalString(input.note, 'note');
        optionalBoolean(input.supersede, 'supersede');
        const text = optionalString(input.text, 'text');
        const corrects = optionalString(input.corrects, 'corrects');
        requireSigner(input.signer);
        const plain = {
          proposalId: input.proposalId,
          ...(input.note === undefined ? {} : { note: input.note }),
          ...(input.supersede === undefined ? {} : { supersede: input.supersede }),
          ...(corrects === undefined ? {} : { corrects }),
          signer: input.signer,
        };
        if (text === undefined) return decisions.decide({ ...plain, subjectId, decision });
        if (decision !== 'approve')
          throw invalidField('text', 'only an approval takes an edited text');
        return approveEdited({ facts, gate, decisions }, subjectId, plain, text, input.note);
      },
      async delegate(input) {
        const slot = typeof input.slot === 'string' ? input.slot : '';
        if (!SLOT_NAME.test(slot)) throw invalidField('slot', 'must name a declared action slot');
        const autoLive = optionalBoolean(input.autoLive, 'autoLive') ?? true;
        const tools = optionalStringList(input.tools, 'tools') ?? [];
        if (autoLive && tools.length === 0) {
          throw invalidField('tools', 'name the tools whose receipts may make facts live');
        }
        if (!autoLive && tools.length > 0) {
          throw invalidField('tools', 'a revoked delegation names no tools');
        }
        const bound = delegationBound(input, autoLive);
        requireSigner(input.signer);
        return decisions.delegate({
          subjectId,
          slot,
          autoLive,
          tools,
          bound,
          signer: input.signer,
        });
      },
      async key() {
        const s = await subjects.get(subjectId);
        return s?.ownerKeyId == null || s.ownerPublicKey === null
          ? null
          : { keyId: s.ownerKeyId, publicKeyPem: s.ownerPublicKey };
      },
      async setKey(input) {
        const pem = typeof input?.publicKeyPem === 'string' ? input.publicKeyPem : '';
        const keyId = deps.crypto.keyIdOf(pem);
        if (keyId === null) {
          throw new EngineError('INVALID_ARGUMENT', 'publicKeyPem is not an Ed25519 public key', {
            data: { field: 'publicKeyPem' },
          });
        }
        if (input.keyId !== keyId) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `keyId "${String(input.keyId)}" is not the id of this public key (${keyId})`,
            { data: { field: 'keyId' } },
          );
        }
        if (!(await subjects.setOwnerKey(subjectId, pem, keyId))) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `subject "${subjectId}" already has an owner key`,
          );
        }
      },
      async verifyChain(options = {}) {
        const given = options.anchor;
        if (given !== undefined) {
          const a = given as Partial<OwnerAnchor> | null;
          if (
            typeof a !== 'object' ||
            a === null ||
            typeof a.keyId !== 'string' ||
            (a.publicKeyPem !== undefined && typeof a.publicKeyPem !== 'string') ||
            (a.heads !== undefined && !Array.isArray(a.heads))
          ) {
            throw invalidField('anchor', 'must be an owner anchor (keyFileAnchor)');
          }
        }
        const head = options.signedHead;
        if (
          head !== undefined &&
          (typeof head !== 'object' ||
            head === null ||
            !Number.isSafeInteger(head.seq) ||
            head.seq < 1 ||
            typeof head.hash !== 'string' ||
            (head.root !== undefined && typeof head.root !== 'string'))
        ) {
          throw invalidField('signedHead', 'must be { seq, hash } from a decision');
        }
        const key = options.ownerKey;
        if (
          key !== undefined &&
          (typeof key !== 'object' ||
            key === null ||
            typeof key.keyId !== 'string' ||
            typeof key.publicKeyPem !== 'string')
        ) {
          throw invalidField('ownerKey', 'must be { keyId, publicKeyPem } (readOwnerPublicKey)');
        }
        return trust.audit(subjectId, options);
      },
    }),
    slots: (subjectId) => ({
      async declare(input) {
        if (typeof input.name !== 'string' || !SLOT_NAME.test(input.name)) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `invalid slot name "${String(input.name)}": use a-z, 0-9 and _ (64 at most)`,
            { data: { field: 'name' } },
          );
        }
        const rule = SLOT_RULES.find((r) => r === input.rule);
        if (rule === undefined) {
          throw new EngineError(
            'UNKNOWN_SLOT_RULE',
            `unknown slot rule "${String(input.rule)}": use ${SLOT_RULES.join(', ')}`,
          );
        }
        optionalBoolean(input.autoLive, 'autoLive');
        let scope: SummaryScope | undefined;
        if (input.scope !== undefined) {
          if (rule !== 'summary') {
            throw new EngineError(
              'INVALID_ARGUMENT',
              `only summary aspects have a scope, and "${String(input.name)}" is declared ${rule}`,
              { data: { field: 'scope' } },
            );
          }
          scope = parseChoice(SUMMARY_SCOPES, input.scope, 'scope');
        }
        const declared = (await listSlots(subjectId)).find((s) => s.name === input.name);
        // re-declaring an aspect without a scope keeps the one it has
        if (rule === 'summary') scope ??= declared?.rule === 'summary' ? declared.scope : 'rolling';
        if (input.autoLive === true) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            rule === 'action'
              ? 'a slot goes live automatically only by a signed owner delegation: owner.delegate (memledger slot delegate)'
              : 'only action slots can go live automatically',
            { data: { field: 'autoLive' } },
          );
        }
        // A slot's rule decides what its facts needed to get in; changing it under facts already
        // stored (say, turning auto-live on) would rewrite what their passports mean.
        const name = input.name;
        const existing = declared;
        if (
          existing !== undefined &&
          (existing.rule !== rule || existing.scope !== scope) &&
          (await facts.countInSlot(subjectId, name)) > 0
        ) {
          throw new EngineError(
            'SLOT_IN_USE',
            existing.rule !== rule
              ? `slot "${name}" already holds facts under rule ${existing.rule}; declare a new slot instead`
              : `summary aspect "${name}" already holds ${existing.scope ?? 'rolling'} summaries; declare a new aspect instead`,
          );
        }
        if (existing !== undefined && existing.rule !== rule && existing.autoLive) {
          throw new EngineError(
            'SLOT_IN_USE',
            `slot "${name}" is delegated; revoke the delegation (owner.delegate with autoLive false) before changing its rule`,
          );
        }
        await slots.declare(
          subjectId,
          { name, rule, ...(scope === undefined ? {} : { scope }) },
          clock(),
        );
        return (await listSlots(subjectId)).find((s) => s.name === name) as SlotDeclaration;
      },
      list: () => listSlots(subjectId),
    }),
    facts: (subjectId) => ({
      // a copy: the view is kept and shared by reads, the caller's array is its own
      live: async () => [...(await trust.view(subjectId)).live],
      async integrity() {
        const view = await trust.view(subjectId);
        return {
          ok: !hasIntegrityProblem(view),
          chain: { ...view.chain },
          withheld: view.withheld.map((w) => ({
            factId: w.fact.id,
            code: w.code,
            reason: w.reason,
          })),
          unexplained: view.unexplained.map((u) => ({
            factId: u.id,
            status: u.status,
            code: u.code,
            reason: u.reason,
          })),
          delegations: view.delegations.map((d) => ({ ...d })),
          warning: integrityLines(view),
        };
      },
      async all() {
        const view = await trust.view(subjectId);
        return (await facts.byStatus(subjectId, ALL_STATUSES)).map(trustedReader(view));
      },
      async get(id) {
        requireFactId(id, 'factId');
        const fact = await facts.get(subjectId, id);
        if (fact === null) throw new EngineError('FACT_NOT_FOUND', `no fact "${id}"`);
        return trustedReader(await trust.view(subjectId))(fact);
      },
    }),
  };
}
