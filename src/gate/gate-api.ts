import type { ChainCrypto, ChainReport, Decision } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import {
  DEFAULT_SLOTS,
  SLOT_RULES,
  type Fact,
  type SlotDeclaration,
  type SlotRule,
} from '../domain/fact.js';
import { DEFAULT_CORRECTION_CUES, DEFAULT_FAILURE_CUES } from '../domain/gate-rules.js';
import { requireId, type Turn } from '../domain/turn.js';
import { DroppedSql, type DroppedProposal } from '../store/dropped-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { SessionSql } from '../store/session-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TurnSql } from '../store/turn-sql.js';
import { OwnerDecisions, type DecideResult, type OwnerSigner } from './owner-decisions.js';
import { ProposalGate, type GateConfig, type ProposeResult } from './proposal-gate.js';

export interface PendingProposal {
  fact: Fact;
  /** The full turn the proposal cites, so a reviewer sees the quote in its context. */
  citedTurn: Turn | null;
}

export interface GateApi {
  slots: {
    declare(input: {
      subject?: string;
      name: string;
      rule: string;
      autoLive?: boolean;
    }): Promise<SlotDeclaration>;
    list(options?: { subject?: string }): Promise<SlotDeclaration[]>;
  };
  /** Everything that wants to become memory goes through here. */
  propose(input: {
    sessionId: string | undefined;
    proposals: readonly unknown[];
    proposedBy?: string;
  }): Promise<ProposeResult>;
  pile(options?: { subject?: string }): Promise<PendingProposal[]>;
  /** One fact or proposal by id, whatever its status. */
  fact(id: string): Promise<Fact | null>;
  dropped(options?: { subject?: string; limit?: number }): Promise<DroppedProposal[]>;
  decide(input: {
    proposalId: string;
    decision: string;
    note?: string;
    signer: OwnerSigner;
  }): Promise<DecideResult>;
  chain: {
    /**
     * Verifies the subject's decision chain. `ownerKey` is the owner's out-of-store anchor (the
     * public half of the key file): a store whose key differs fails at link 1 with KEY_MISMATCH.
     */
    verify(options?: {
      subject?: string;
      ownerKey?: { keyId: string; publicKeyPem: string };
    }): Promise<ChainReport>;
  };
  owner: {
    /** Stores the subject's owner public key (once). */
    setKey(input: { subject?: string; publicKeyPem: string; keyId: string }): Promise<void>;
    key(options?: { subject?: string }): Promise<{ keyId: string; publicKeyPem: string } | null>;
  };
  memory: {
    /** Live facts only (status active). */
    live(options?: { subject?: string }): Promise<Fact[]>;
    /** Every fact, for history views: each labelled by its status. */
    all(options?: { subject?: string }): Promise<Fact[]>;
  };
}

export interface GateApiDeps {
  client: SqlClient;
  crypto: ChainCrypto;
  clock: () => Date;
  newId: () => string;
  defaultSubject: string;
  config?: Partial<GateConfig>;
}

export function createGateApi(deps: GateApiDeps): GateApi {
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

  const subjectOf = async (subject: string | undefined): Promise<string> => {
    const id = requireId(subject ?? deps.defaultSubject, 'subject');
    if ((await subjects.get(id)) === null) {
      throw new EngineError(
        'SUBJECT_NOT_FOUND',
        `subject "${id}" does not exist; run \`memledger init --subject ${id}\``,
      );
    }
    return id;
  };

  return {
    slots: {
      async declare(input) {
        const subjectId = await subjectOf(input.subject);
        if (!/^[a-z][a-z0-9_]{0,63}$/.test(input.name)) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `invalid slot name "${input.name}": use a-z, 0-9 and _ (64 at most)`,
          );
        }
        const rule = SLOT_RULES.find((r) => r === input.rule);
        if (rule === undefined) {
          throw new EngineError(
            'UNKNOWN_SLOT_RULE',
            `unknown slot rule "${input.rule}": use ${SLOT_RULES.join(', ')}`,
          );
        }
        if (input.autoLive === true && rule !== 'action') {
          throw new EngineError('INVALID_ARGUMENT', 'only action slots can go live automatically');
        }
        const slot: SlotDeclaration = {
          name: input.name,
          rule: rule as SlotRule,
          autoLive: input.autoLive === true,
        };
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
      async list(options = {}) {
        return slots.list(await subjectOf(options.subject));
      },
    },
    async propose(input) {
      const sessionId = requireId(input.sessionId, 'session');
      const session = await sessions.get(sessionId);
      if (session === null) throw new EngineError('SESSION_NOT_FOUND', `no session "${sessionId}"`);
      return gate.propose({
        sessionId,
        subjectId: session.subjectId,
        proposals: input.proposals,
        proposedBy: input.proposedBy ?? 'host',
      });
    },
    async pile(options = {}) {
      const subjectId = await subjectOf(options.subject);
      const pending = await facts.byStatus(subjectId, ['proposed']);
      const out: PendingProposal[] = [];
      for (const fact of pending) {
        let citedTurn: Turn | null = null;
        if (fact.evidence.sessionId !== null && fact.evidence.seq !== null) {
          citedTurn =
            (
              await turns.listBySession(fact.evidence.sessionId, {
                afterSeq: fact.evidence.seq - 1,
                limit: 1,
              })
            )[0] ?? null;
        }
        out.push({ fact, citedTurn });
      }
      return out;
    },
    async fact(id) {
      return facts.find(id);
    },
    async dropped(options = {}) {
      return dropped.list(await subjectOf(options.subject), options.limit ?? 100);
    },
    async decide(input) {
      const decision = (['approve', 'reject'] as const).find((d) => d === input.decision);
      if (decision === undefined) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `a decision is approve or reject, not "${input.decision}"`,
        );
      }
      return decisions.decide({ ...input, decision: decision as Decision });
    },
    chain: {
      async verify(options = {}) {
        const subjectId = await subjectOf(options.subject);
        const anchor = options.ownerKey;
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
    },
    owner: {
      async setKey(input) {
        const subjectId = await subjectOf(input.subject);
        if (!(await subjects.setOwnerKey(subjectId, input.publicKeyPem, input.keyId))) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `subject "${subjectId}" already has an owner key`,
          );
        }
      },
      async key(options = {}) {
        const s = await subjects.get(await subjectOf(options.subject));
        return s?.ownerKeyId == null || s.ownerPublicKey === null
          ? null
          : { keyId: s.ownerKeyId, publicKeyPem: s.ownerPublicKey };
      },
    },
    memory: {
      async live(options = {}) {
        return facts.byStatus(await subjectOf(options.subject), ['active']);
      },
      async all(options = {}) {
        return facts.byStatus(await subjectOf(options.subject), [
          'active',
          'proposed',
          'rejected',
          'superseded',
          'retracted',
          'expired',
          'unverified',
        ]);
      },
    },
  };
}

/** Declares the default slots for a new subject. */
export async function declareDefaultSlots(
  client: SqlClient,
  subjectId: string,
  at: Date,
): Promise<void> {
  const slots = new SlotSql(client);
  for (const slot of DEFAULT_SLOTS) await slots.declare(subjectId, slot, at);
}
