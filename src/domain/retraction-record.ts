import type { CaughtBy, RetractionVerdict } from './retraction.js';
import type { FactId, RetractionId } from './ids.js';

/**
 * One entry of the retraction ledger as stored (append-only; only the settlement is written
 * later, once): the claim, what it stood on, why it was wrong, what replaces it, the typed
 * falsifier, and how it was settled.
 */
export interface Retraction {
  id: RetractionId;
  subjectId: string;
  /** The claim that was wrong, as it was made. */
  claim: string;
  /** When the claim was made, if known. */
  claimedAt: Date | null;
  /** Where the claim was made (a chat, a file, a report), if known. */
  claimSurface: string | null;
  /** A pointer to the claim on that surface, if known. */
  claimRef: string | null;
  /** What the claim stood on. */
  stoodOn: string;
  /** Why it was wrong. */
  whyWrong: string;
  /** What replaces it. */
  correctedClaim: string;
  correctedAt: Date;
  caughtBy: CaughtBy;
  tags: string[];
  /** The falsifier's procedure (how to check). */
  procedure: string;
  /** The observation that keeps the retraction standing. */
  passObservation: string;
  /** The observation that overturns it. */
  overturnCondition: string;
  /** A structured probe that settles the falsifier, with the verdict that means each outcome. */
  probe: { spec: unknown; standsIf: string; overturnsIf: string } | null;
  /** When the falsifier matures. */
  dueAt: Date;
  /** The live fact the retraction took down, if any. */
  factId: FactId | null;
  verdict: RetractionVerdict;
  settledAt: Date | null;
  /** What was observed when it was settled. */
  settledOutcome: string | null;
  /** Who settled it (the owner, a probe, …). */
  settledBy: string | null;
  /** The probe run that settled it, if a probe did. */
  settledProbeRecordId: string | null;
  /** The copy of the fact an overturning restored, if any. */
  restoredFactId: FactId | null;
  /** When the ledger recorded it. */
  recordedAt: Date;
}
