import { EngineError } from '../domain/errors.js';
import { invalidField } from '../domain/input.js';
import type { FactSql } from '../store/fact-sql.js';
import type { DecideResult, OwnerDecisions, OwnerSigner } from './owner-decisions.js';
import type { ProposalGate } from './proposal-gate.js';

/** What the owner approves instead of a proposal's text, and what the answer says of it. */
export type EditedDecision = DecideResult & {
  edited?: { from: string; proposed: string; attested: boolean; attestation: unknown };
};

/**
 * Approves `text` in place of a pending proposal's (docs/TRUST.md, "Editing before approving"):
 * the gate checks it against the same evidence as the owner's proposal (EDIT_DROPPED, nothing
 * signed, when it drops it); the edit is approved with a link naming the original, and the
 * original rejected with a link naming the edit. The same text as proposed is a plain approval.
 */
export async function approveEdited(
  deps: { facts: FactSql; gate: ProposalGate; decisions: OwnerDecisions },
  subjectId: string,
  plain: { proposalId: string; note?: string; supersede?: boolean; signer: OwnerSigner },
  text: string,
  note: string | undefined,
): Promise<EditedDecision> {
  const { facts, gate, decisions } = deps;
  const decision = 'approve' as const;
  const fact = await facts.get(subjectId, plain.proposalId);
  if (fact === null)
    throw new EngineError('PROPOSAL_NOT_FOUND', `no proposal "${plain.proposalId}"`);
  if (fact.status !== 'proposed') {
    throw new EngineError('NOT_PENDING', `proposal "${fact.id}" is ${fact.status}, not pending`);
  }
  if (text === fact.text) return decisions.decide({ ...plain, subjectId, decision });
  const { sessionId, seq, quote, tool } = fact.evidence;
  if (sessionId === null || seq === null) {
    throw invalidField('text', 'only a proposal that cites a turn can be edited');
  }
  // the edited text goes through the gate against the same evidence, as the owner's proposal
  const checked = await gate.propose({
    sessionId,
    subjectId,
    proposedBy: `owner (edit of ${fact.id})`,
    proposals: [
      {
        slot: fact.slot,
        ...(fact.key === null ? {} : { key: fact.key }),
        text,
        origin: fact.origin,
        evidence: {
          turn: seq,
          ...(quote === null ? {} : { quote }),
          ...(tool === null ? {} : { tool }),
        },
        ...(fact.validTo === null ? {} : { validTo: fact.validTo.toISOString() }),
      },
    ],
  });
  const drop = checked.dropped[0];
  if (drop !== undefined) {
    throw new EngineError(
      'EDIT_DROPPED',
      `the gate drops the edited text (${drop.code}): ${drop.reason}; nothing was signed`,
      { data: { dropCode: drop.code } },
    );
  }
  const edited = checked.proposed[0];
  if (edited === undefined) throw new EngineError('INTERNAL', 'the gate answered nothing');
  const approved = await decisions.decide({
    ...plain,
    subjectId,
    decision,
    proposalId: edited.id,
    note: JSON.stringify({ editOf: fact.id, note: note ?? '' }),
  });
  await decisions.decide({
    subjectId,
    proposalId: fact.id,
    decision: 'reject',
    note: JSON.stringify({ editedInto: edited.id }),
    signer: plain.signer,
  });
  return {
    ...approved,
    edited: {
      from: fact.id,
      proposed: fact.text,
      attested: edited.attested,
      attestation: edited.attestation,
    },
  };
}
