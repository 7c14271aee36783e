import { DECISIONS, type ChainCrypto } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import { invalidField, optionalBoolean, optionalString } from '../domain/input.js';
import { DEFAULT_SLOTS, SLOT_RULES, type Fact, type SlotDeclaration } from '../domain/fact.js';
import { DEFAULT_CORRECTION_CUES, DEFAULT_FAILURE_CUES } from '../domain/gate-rules.js';
import { sessionNotFound } from '../domain/session.js';
import { requireId, type Turn } from '../domain/turn.js';
import { parseChoice } from '../domain/vocabulary.js';
import { DroppedSql } from '../store/dropped-sql.js';
import { FactSql } from '../store/fact-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { SessionSql } from '../store/session-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TurnSql } from '../store/turn-sql.js';
import type { FactsApi, GateApi, OwnerApi, PendingProposal, SlotsApi } from './gate-types.js';
import { OwnerDecisions } from './owner-decisions.js';
import { ProposalGate, type GateConfig } from './proposal-gate.js';

export interface GateModuleDeps extends ModuleDeps {
  crypto: ChainCrypto;
  config?: Partial<GateConfig>;
}

export interface GateModule {
  gate(subjectId: string): GateApi;
  owner(subjectId: string): OwnerApi;
  slots(subjectId: string): SlotsApi;
  facts(subjectId: string): FactsApi;
}

const SLOT_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_LIMIT = 1000;
const ALL_STATUSES: readonly Fact['status'][] = [
  'active',
  'proposed',
  'rejected',
  'superseded',
  'retracted',
  'expired',
  'unverified',
];

function limitOf(limit: number | undefined, fallback: number): number {
  const n = limit ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `limit must be a whole number from 1 to ${MAX_LIMIT}`,
      {
        data: { field: 'limit' },
      },
    );
  }
  return n;
}

/** Declares the default slots for a new subject. */
export async function declareDefaultSlots(
  db: SqlExecutor,
  subjectId: string,
  at: Date,
): Promise<void> {
  const slots = new SlotSql(db);
  for (const slot of DEFAULT_SLOTS) await slots.declare(subjectId, slot, at);
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
  const gate = new ProposalGate({
    client,
    clock,
    newId: deps.newId,
    config: {
      correctionCues: deps.config?.correctionCues ?? DEFAULT_CORRECTION_CUES,
      failureCues: deps.config?.failureCues ?? DEFAULT_FAILURE_CUES,
    },
  });
  const decisions = new OwnerDecisions(client, deps.crypto, clock);

  const citedTurnOf = async (fact: Fact): Promise<Turn | null> => {
    if (fact.evidence.sessionId === null || fact.evidence.seq === null) return null;
    const [turn] = await turns.listBySession(fact.evidence.sessionId, {
      afterSeq: fact.evidence.seq - 1,
      limit: 1,
    });
    return turn ?? null;
  };

  return {
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
      async pile() {
        const out: PendingProposal[] = [];
        for (const fact of await facts.byStatus(subjectId, ['proposed'])) {
          out.push({ fact, citedTurn: await citedTurnOf(fact) });
        }
        return out;
      },
      async dropped(options = {}) {
        return dropped.list(subjectId, limitOf(options.limit, 100));
      },
    }),
    owner: (subjectId) => ({
      async decide(input) {
        const decision = parseChoice(DECISIONS, input.decision, 'decision');
        optionalString(input.note, 'note');
        const signer: unknown = input.signer;
        if (
          typeof signer !== 'object' ||
          signer === null ||
          typeof (signer as { keyId?: unknown }).keyId !== 'string' ||
          typeof (signer as { publicKeyPem?: unknown }).publicKeyPem !== 'string' ||
          typeof (signer as { sign?: unknown }).sign !== 'function'
        ) {
          throw invalidField('signer', 'must be the owner signer from loadOwnerKey');
        }
        return decisions.decide({ ...input, subjectId, decision });
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
        const anchor = options.ownerKey;
        if (
          anchor !== undefined &&
          (typeof anchor !== 'object' ||
            anchor === null ||
            typeof anchor.keyId !== 'string' ||
            typeof anchor.publicKeyPem !== 'string')
        ) {
          throw invalidField('ownerKey', 'must be { keyId, publicKeyPem } (readOwnerPublicKey)');
        }
        if (anchor !== undefined) {
          const stored = await subjects.get(subjectId);
          if (
            stored?.ownerKeyId !== anchor.keyId ||
            stored.ownerPublicKey !== anchor.publicKeyPem
          ) {
            const length = (await decisions.verify(subjectId)).length;
            return {
              ok: false,
              length,
              brokenAt: 1,
              code: 'KEY_MISMATCH',
              reason: `the store's owner key (${stored?.ownerKeyId ?? 'none'}) is not the key in the owner's key file (${anchor.keyId})`,
            };
          }
        }
        return decisions.verify(subjectId);
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
        if (input.autoLive === true && rule !== 'action') {
          throw new EngineError('INVALID_ARGUMENT', 'only action slots can go live automatically', {
            data: { field: 'autoLive' },
          });
        }
        const slot: SlotDeclaration = { name: input.name, rule, autoLive: input.autoLive === true };
        // A slot's rule decides what its facts needed to get in; changing it under facts already
        // stored (say, turning auto-live on) would rewrite what their passports mean.
        const existing = (await slots.list(subjectId)).find((s) => s.name === slot.name);
        if (
          existing !== undefined &&
          (existing.rule !== slot.rule || existing.autoLive !== slot.autoLive) &&
          (await facts.countInSlot(subjectId, slot.name)) > 0
        ) {
          throw new EngineError(
            'SLOT_IN_USE',
            `slot "${slot.name}" already holds facts under rule ${existing.rule}${existing.autoLive ? ' (auto-live)' : ''}; declare a new slot instead`,
          );
        }
        await slots.declare(subjectId, slot, clock());
        return slot;
      },
      list: () => slots.list(subjectId),
    }),
    facts: (subjectId) => ({
      live: () => facts.byStatus(subjectId, ['active']),
      all: () => facts.byStatus(subjectId, ALL_STATUSES),
      async get(id) {
        if (typeof id !== 'string' || id === '') {
          throw new EngineError('INVALID_ARGUMENT', 'a fact id is required', {
            data: { field: 'factId' },
          });
        }
        const fact = await facts.get(subjectId, id);
        if (fact === null) throw new EngineError('FACT_NOT_FOUND', `no fact "${id}"`);
        return fact;
      },
    }),
  };
}
