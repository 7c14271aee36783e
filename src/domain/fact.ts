/**
 * A fact carries its passport from the moment it is written: how it was learned (origin), where
 * its evidence is, whether that evidence attests its text, and its place in time.
 */
import type { Attestation } from './attestation.js';
import type { FactId, RetractionId } from './ids.js';
export const FACT_ORIGINS = ['did', 'saw', 'inferred', 'summarized'] as const;
/** One of `FACT_ORIGINS`: how a fact was learned. */
export type FactOrigin = (typeof FACT_ORIGINS)[number];

/** Where a fact stands; only `active` facts backed by an owner signature are live. */
export const FACT_STATUSES = [
  'proposed',
  'active',
  'rejected',
  'superseded',
  'retracted',
  'expired',
  'unverified',
] as const;
/** One of `FACT_STATUSES`. */
export type FactStatus = (typeof FACT_STATUSES)[number];

/**
 * How a slot's proposals are checked. A `summary` slot is a summary aspect: it takes no
 * proposals; `summaries.summarize` writes it, sentence by sentence, each checked against the
 * turns it cites.
 */
export const SLOT_RULES = ['user_fact', 'correction', 'action', 'summary'] as const;
/** One of `SLOT_RULES`. */
export type SlotRule = (typeof SLOT_RULES)[number];

/** What a slot's name may be: a-z, 0-9 and _, starting with a letter, 64 at most. */
export const SLOT_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A slot a subject's facts are proposed into, and the rule its proposals are checked by. */
export interface SlotDeclaration {
  name: string;
  rule: SlotRule;
  /**
   * Only for `action` slots: go live when the receipt checks out, without an owner decision. Set
   * only by an owner-signed delegation (`owner.delegate`); a declaration never sets it.
   */
  autoLive: boolean;
  /** The tools whose receipts the delegation accepts (empty unless delegated). */
  tools?: readonly string[];
  /**
   * Only for `summary` slots: `rolling` folds one summary forward session by session, `session`
   * keeps one per session.
   */
  scope?: SummaryScope;
}

/** How a summary aspect is kept. */
export const SUMMARY_SCOPES = ['rolling', 'session'] as const;
/** One of `SUMMARY_SCOPES`. */
export type SummaryScope = (typeof SUMMARY_SCOPES)[number];

/** One turn a summarized fact rests on: which turn, of which session, said when (ISO 8601). */
export interface Citation {
  turn: string;
  session: string;
  seq: number;
  at: string;
}

/**
 * Slots every subject starts with. A slot that exists every night gets filled every night. One
 * summary aspect, `life_lately` (rolling), so `memledger summarize --aspect life_lately` works on a
 * fresh store; a reflection is never offered it. A subject created before it keeps its own
 * declarations (`memledger slot declare --name life_lately --rule summary` adds it).
 */
export const DEFAULT_SLOTS: readonly SlotDeclaration[] = [
  { name: 'what_i_know_about_user', rule: 'user_fact', autoLive: false },
  { name: 'stances', rule: 'user_fact', autoLive: false },
  { name: 'corrections_received', rule: 'correction', autoLive: false },
  { name: 'life_lately', rule: 'summary', autoLive: false, scope: 'rolling' },
];

/** What a proposal cites. A user quote for user facts and corrections; a tool for actions. */
export interface ProposalEvidence {
  /** The cited turn's seq in the proposal's session. */
  turn?: number;
  quote?: string;
  tool?: string;
}

/** A proposed memory as the agent submits it: slot, text, origin and evidence. */
export interface Proposal {
  slot: string;
  key?: string;
  text: string;
  origin: FactOrigin;
  evidence?: ProposalEvidence;
  /** World time the fact holds from/to (ISO dates), kept apart from system time. */
  validFrom?: string;
  validTo?: string;
}

/** The part of a turn the gate needs to judge a citation. */
export interface CitedTurn {
  id: string;
  seq: number;
  sessionId: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  corrective: boolean;
  /** Tools on the turn's receipt (assistant turns), or [] when none ran or unknown. */
  receiptTools: readonly string[];
  recordedAt: Date;
  /** The owner forgot it: it is a tombstone, and nothing may cite it (EVIDENCE_FORGOTTEN). */
  forgotten?: boolean;
}

/** A stored fact with its passport: origin, evidence, attestation, status and lineage. */
export interface Fact {
  id: FactId;
  subjectId: string;
  slot: string;
  key: string | null;
  text: string;
  origin: FactOrigin;
  status: FactStatus;
  /** False when the quote is real but the cited turn does not say what the text claims. */
  attested: boolean;
  /**
   * What the quoted sentence does with the claim (attestation.ts); `attested` is its verdict
   * being `asserted`. Null for actions (their receipt attests them), summaries (each sentence is
   * checked against its cited turns) and facts stored before typed attestation (migration 16).
   */
  attestation?: Attestation | null;
  evidence: {
    turnId: string | null;
    sessionId: string | null;
    seq: number | null;
    quote: string | null;
    tool: string | null;
    /** A summarized fact's cited turns (signed with the rest); null for every other fact. */
    citations?: readonly Citation[] | null;
  };
  supersedesId: FactId | null;
  supersededById: FactId | null;
  validFrom: Date | null;
  validTo: Date | null;
  recordedAt: Date;
  supersededAt: Date | null;
  /** When the status last moved (proposed, decided, superseded, retracted, restored). */
  statusAt: Date;
  /** Who proposed it: reflection, extraction, agent, host, restoration… */
  proposedBy: string;
  /** The ledger row that retracted it, if it was retracted. */
  retractionId: RetractionId | null;
  /** For a restored fact: the retracted fact it restores. */
  restoredFromId: FactId | null;
  /**
   * Why a fact stored as live is shown `unverified`: nothing the owner signed backs it as it is
   * stored now (the trust check's code and reason). Absent on every fact that verified.
   */
  integrity?: { code: string; reason: string };
}
