import type { ProbeSpec, ProbeVerdict } from '../domain/probe.js';
import type { CaughtBy, RetractionVerdict, SettledVerdict } from '../domain/retraction.js';
import type { Retraction } from '../domain/retraction-record.js';
import type { FactId, RetractionId } from '../domain/ids.js';

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
  /** A live fact this retraction takes down. */
  factId?: FactId;
  /** A machine probe that can settle the falsifier, with the verdict for each side. */
  probe?: { spec: ProbeSpec; standsIf: ProbeVerdict; overturnsIf: ProbeVerdict };
}

export type SettleInput =
  | { retractionId: RetractionId; runProbe: true; by?: string }
  | { retractionId: RetractionId; verdict: SettledVerdict; outcome: string; by?: string };

/** The typed retraction ledger. */
export interface LedgerApi {
  /** Records a retraction (and takes `factId` down from live memory, when given). */
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
