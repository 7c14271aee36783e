import type { FactId } from '../domain/ids.js';
import type { Attestation } from '../domain/attestation.js';
import type { Fact, SlotDeclaration } from '../domain/fact.js';
import {
  checkProposal,
  claimsFailure,
  referentTokens,
  type DropCode,
} from '../domain/gate-rules.js';
import { textWithinBound } from '../domain/decision-chain.js';
import { normalizeForQuote } from '../domain/text/fold.js';
import { DROPPED_LIMITS, storableString } from '../domain/dropped-proposal.js';
import { lockChain } from '../store/decision-sql.js';
import { readProposal } from './read-proposal.js';
import type { HeldTrust, Trust } from '../trust/trust-types.js';
import type { TrustView } from '../domain/trust.js';
import { DroppedSql } from '../store/dropped-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { GateTurnSql } from '../store/gate-turn-sql.js';
import { RetractionSql } from '../store/retraction-sql.js';
import { transactionOf } from '../store/rolled-back.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';

export interface GateConfig {
  correctionCues: readonly string[];
  failureCues: readonly string[];
}

export interface ProposeInput {
  sessionId: string;
  subjectId: string;
  /** Raw items (a reflection's JSON output); malformed items are dropped, not thrown. */
  proposals: readonly unknown[];
  /** Who proposes: reflection, extraction, agent, host… */
  proposedBy: string;
  /**
   * What a model was shown and may answer about (memledger's reflection): a proposal in another
   * slot is dropped SLOT_NOT_OFFERED, one citing a turn outside the range TURN_NOT_FOUND, and
   * nothing of the batch goes live on a receipt, whatever the slot's delegation says.
   */
  scope?: { slots: ReadonlySet<string>; turns: { from: number; to: number } };
}

/** What the gate made of each raw item, in the caller's order: a stored fact or a logged drop. */
export type GateOutcome = { factId: string } | { droppedId: string };

/**
 * Runs in the batch's own transaction once every item is judged, so whatever a caller records
 * about the batch (a reflection's run and items) is stored with it or not at all.
 */
export type GateWithin = (tx: SqlExecutor, outcomes: readonly GateOutcome[]) => Promise<void>;

export interface ProposeResult {
  proposed: Array<{
    id: FactId;
    slot: string;
    text: string;
    attested: boolean;
    /** What the quoted sentence does with the claim; null for an action (its receipt attests it). */
    attestation: Attestation | null;
    status: Fact['status'];
  }>;
  dropped: Array<{ slot: string; text: string; code: DropCode; reason: string }>;
}

export interface ProposalGateDeps {
  client: SqlClient;
  trust: Trust;
  clock: () => Date;
  newId: () => string;
  config: GateConfig;
}

/** Why a proposal falls outside what its model was shown, or null. */
function scopeProblem(
  scope: ProposeInput['scope'],
  p: { slot: string; evidence?: { turn?: number } },
): { code: DropCode; reason: string } | null {
  if (scope === undefined) return null;
  if (!scope.slots.has(p.slot)) {
    return {
      code: 'SLOT_NOT_OFFERED',
      reason: `slot "${p.slot}" was not offered to this reflection (action slots are filled from receipts and summary aspects by summarize, never by a reflection's reading of the record)`,
    };
  }
  const turn = p.evidence?.turn;
  if (typeof turn === 'number' && (turn < scope.turns.from || turn > scope.turns.to)) {
    return {
      code: 'TURN_NOT_FOUND',
      reason: `turn ${turn} was not shown to this reflection (it saw turns ${scope.turns.from} to ${scope.turns.to})`,
    };
  }
  return null;
}

/**
 * The write gate: everything that wants to become memory comes through `propose`. What passes
 * is stored `proposed` (or `active` for an auto-live action slot); every drop is logged with its
 * code and reason.
 */
/** What the dropped log keeps of a proposal that cites a forgotten turn, instead of its text. */
export const FORGOTTEN_TEXT = '[not kept: it cites a forgotten turn]';

export class ProposalGate {
  constructor(private readonly deps: ProposalGateDeps) {}

  /**
   * One transaction for the whole batch, under the subject's chain lock: a batch is stored whole
   * or not at all, and an auto-live promotion cannot interleave with an owner decision. With
   * `rehearse`, the batch is judged and written as usual and the transaction is rolled back: the
   * result says what the gate would have done, and nothing of it (nor of `within`) is stored.
   */
  propose(
    input: ProposeInput,
    within?: GateWithin,
    options: { rehearse?: boolean } = {},
  ): Promise<ProposeResult> {
    const transaction = transactionOf(this.deps.client, options.rehearse === true);
    return this.deps.trust.withSubject(input.subjectId, (held) =>
      transaction(async (tx) => {
        await lockChain(tx, input.subjectId);
        const outcomes: GateOutcome[] = [];
        const result = await this.run(tx, held, input, outcomes);
        if (within !== undefined) await within(tx, outcomes);
        return result;
      }),
    );
  }

  private async run(
    tx: SqlExecutor,
    held: HeldTrust,
    input: ProposeInput,
    outcomes: GateOutcome[],
  ): Promise<ProposeResult> {
    const { deps } = this;
    const sql = {
      slots: new SlotSql(tx),
      facts: new FactSql(tx),
      retractions: new RetractionSql(tx),
      dropped: new DroppedSql(tx),
      turns: new GateTurnSql(tx),
    };
    const at = deps.clock();
    const slots = new Map<string, SlotDeclaration>(
      (await sql.slots.list(input.subjectId)).map((s) => [s.name, s]),
    );
    const retracted = await sql.retractions.standingClaims(input.subjectId);
    // Only what verifies counts as live for the DUPLICATE rule, and only a verified delegation
    // makes an action go live on its receipt.
    let view: TrustView | null = null;
    const trusted = async () => (view ??= await held.view(tx));
    const chain = await held.chain(tx);
    const slotTexts = new Map<string, string[]>();
    const result: ProposeResult = { proposed: [], dropped: [] };

    for (const raw of input.proposals) {
      const read = readProposal(raw);
      if (!('proposal' in read)) {
        await this.drop(
          sql.dropped,
          input,
          raw,
          read.slot,
          read.text,
          'INVALID_PROPOSAL',
          read.reason,
          at,
          result,
          outcomes,
        );
        continue;
      }
      const p = read.proposal;
      // an undeclared slot is the gate's UNKNOWN_SLOT; a declared one not offered is out of scope
      const outOfScope = slots.has(p.slot) ? scopeProblem(input.scope, p) : null;
      if (outOfScope !== null) {
        await this.drop(
          sql.dropped,
          input,
          raw,
          p.slot,
          p.text,
          outOfScope.code,
          outOfScope.reason,
          at,
          result,
          outcomes,
        );
        continue;
      }
      const slot = slots.get(p.slot) ?? null;
      const cited =
        p.evidence?.turn === undefined
          ? null
          : await sql.turns.cited(input.subjectId, input.sessionId, p.evidence.turn);
      if (cited?.forgotten === true) {
        // what it says may repeat what the owner forgot: the log keeps none of its words
        await this.drop(
          sql.dropped,
          input,
          { slot: p.slot, evidence: { turn: cited.seq } },
          p.slot,
          FORGOTTEN_TEXT,
          'EVIDENCE_FORGOTTEN',
          `it cites turn ${cited.seq}, which the owner forgot; its words are not kept`,
          at,
          result,
          outcomes,
        );
        continue;
      }
      let texts = slotTexts.get(p.slot);
      if (texts === undefined) {
        const live = (await trusted()).live.filter((f) => f.slot === p.slot).map((f) => f.text);
        texts = [...(await sql.facts.pendingTexts(input.subjectId, p.slot)), ...live].map(
          normalizeForQuote,
        );
        slotTexts.set(p.slot, texts);
      }
      let earlier: string[] = [];
      if (cited !== null && claimsFailure(p.text, deps.config.failureCues)) {
        const tokens = referentTokens(p.text, deps.config.failureCues);
        if (tokens.length > 0)
          earlier = await sql.turns.earlierMentions(input.subjectId, cited, tokens);
      }
      const verdict = checkProposal(p, {
        slot,
        citedTurn: cited,
        correctionCues: deps.config.correctionCues,
        failureCues: deps.config.failureCues,
        earlierTurnTexts: earlier,
        retractedClaims: retracted,
        liveOrPendingTexts: texts,
      });
      if (!verdict.ok) {
        await this.drop(
          sql.dropped,
          input,
          raw,
          p.slot,
          p.text,
          verdict.code,
          verdict.reason,
          at,
          result,
          outcomes,
        );
        continue;
      }
      const delegation = chain.delegations.get(p.slot);
      const autoLive =
        input.scope === undefined &&
        slot?.rule === 'action' &&
        delegation !== undefined &&
        delegation.autoLive &&
        p.evidence?.tool !== undefined &&
        delegation.tools.includes(p.evidence.tool) &&
        cited !== null &&
        cited.receiptTools.includes(p.evidence.tool) &&
        // beyond what the delegation lets it say, it waits for the owner
        textWithinBound(p.text, delegation.bound);
      const fact = await sql.facts.insert({
        id: deps.newId(),
        subjectId: input.subjectId,
        slot: p.slot,
        key: p.key ?? null,
        text: p.text,
        origin: p.origin,
        status: 'proposed',
        attested: verdict.attested,
        attestation: verdict.attestation,
        evidence: {
          turnId: cited?.id ?? null,
          sessionId: cited?.sessionId ?? null,
          seq: cited?.seq ?? null,
          quote: p.evidence?.quote ?? null,
          tool: p.evidence?.tool ?? null,
        },
        proposedBy: input.proposedBy,
        validFrom: p.validFrom === undefined ? (cited?.recordedAt ?? null) : new Date(p.validFrom),
        validTo: p.validTo === undefined ? null : new Date(p.validTo),
        at,
      });
      // An action of a delegated slot goes live on its checked receipt, with no decision.
      if (autoLive) await sql.facts.promote(input.subjectId, fact.id, at, 'receipt');
      texts.push(normalizeForQuote(p.text));
      outcomes.push({ factId: fact.id });
      result.proposed.push({
        id: fact.id,
        slot: fact.slot,
        text: fact.text,
        attested: fact.attested,
        attestation: fact.attestation ?? null,
        status: autoLive ? 'active' : 'proposed',
      });
    }
    return result;
  }

  private async drop(
    dropped: DroppedSql,
    input: ProposeInput,
    raw: unknown,
    slot: string,
    text: string,
    code: DropCode,
    reason: string,
    at: Date,
    result: ProposeResult,
    outcomes: GateOutcome[],
  ): Promise<void> {
    const id = this.deps.newId();
    outcomes.push({ droppedId: id });
    await dropped.insert(input.subjectId, {
      id,
      sessionId: input.sessionId,
      slot,
      text,
      proposal: raw ?? null,
      code,
      reason,
      proposedBy: input.proposedBy,
      droppedAt: at,
    });
    // the caller gets a bounded prefix too (a 5 MB text is not echoed back)
    result.dropped.push({
      slot: storableString(slot, DROPPED_LIMITS.prefix).text,
      text: storableString(text, DROPPED_LIMITS.prefix).text,
      code,
      reason,
    });
  }
}
