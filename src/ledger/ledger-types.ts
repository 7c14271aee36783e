import type { ProbeSpec, ProbeVerdict } from '../domain/probe.js';
import type { CaughtBy, RetractionVerdict, SettledVerdict } from '../domain/retraction.js';
import type { Retraction } from '../domain/retraction-record.js';
import type { FactId, RetractionId } from '../domain/ids.js';
import type { LinkSigner } from '../domain/decision-chain.js';

/** The owner's signer (`OwnerSigner`, src/crypto/owner-key.ts), as the ledger sees it. */
export type LedgerSigner = LinkSigner & { publicKeyPem: string };

/** What `ledger.retract` records: the claim, what it stood on, and a falsifier with polarity. */
export interface RetractInput {
  claim: string;
  stoodOn: string;
  whyWrong: string;
  corrected: string;
  procedure: string;
  /** The observation that keeps the retraction standing. */
  passObservation: string;
  /** The observation that overturns it; must differ from `passObservation`. */
  overturnCondition: string;
  caughtBy?: CaughtBy;
  claimedAt?: Date;
  claimSurface?: string;
  claimRef?: string;
  tags?: string[];
  /** When the error was caught; default now. The falsifier matures `dueDays` later. */
  correctedAt?: Date;
  dueDays?: number;
  /**
   * A live fact this retraction names. A fact the owner approved stays live, marked disputed,
   * until the owner signs the retraction (`signer` here, or `owner.retract` later); any other
   * live fact (an action on its receipt, a restoration) is taken down at once.
   */
  factId?: FactId;
  /** The owner's signer: the retraction is signed as it is recorded, in one transaction. */
  signer?: LedgerSigner;
  /** A machine probe that can settle the falsifier, with the verdict for each side. */
  probe?: { spec: ProbeSpec; standsIf: ProbeVerdict; overturnsIf: ProbeVerdict };
}

export type SettleInput =
  | { retractionId: RetractionId; runProbe: true; by?: string }
  | { retractionId: RetractionId; verdict: SettledVerdict; outcome: string; by?: string };

/** The typed retraction ledger. */
export interface LedgerApi {
  /**
   * Records a retraction. With `factId`: takes an action or a restoration down from live memory
   * at once, and a fact the owner approved only with the owner's signature (`signer`).
   */
  retract(input: RetractInput): Promise<Retraction>;
  /** One retraction of the subject (RETRACTION_NOT_FOUND otherwise). */
  get(retractionId: RetractionId): Promise<Retraction>;
  /** The subject's retractions, optionally of one verdict. */
  list(options?: { verdict?: RetractionVerdict }): Promise<Retraction[]>;
  /** Unchecked falsifiers whose maturity date has passed. */
  due(): Promise<Retraction[]>;
  /** Settles a due falsifier by the owner's verdict or by a calibrated probe. */
  settle(input: SettleInput): Promise<Retraction>;
}
