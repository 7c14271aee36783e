import type { PageOptions } from '../domain/input.js';
import type { OwnerAnchor } from '../domain/anchor.js';
import type { Attestation } from '../domain/attestation.js';
import type { OwnerSigner } from '../crypto/owner-key.js';
import type { ChainReport, Decision } from '../domain/decision-chain.js';
import type { Fact, Proposal, SlotDeclaration, SlotRule, SummaryScope } from '../domain/fact.js';
import type { Turn } from '../domain/turn.js';
import type { DelegateResult, ForgetResult, SignedRetraction } from './owner-decisions.js';
import type {
  ForgetPlan,
  ForgetRequest,
  ForgetRequestStatus,
  ForgetScope,
} from '../domain/forget.js';
import type { ProposeResult } from './proposal-gate.js';
import type { EditedDecision } from './owner-edit.js';
import type { PolicyForgetResult, PolicyInEffect } from './policy-forget.js';
import type { ForgetPolicy } from '../domain/forget-policy.js';
import type { DroppedDay, DroppedProposal } from '../domain/dropped-proposal.js';
import type { TrustView } from '../domain/trust.js';
import type { FactId, RetractionId } from '../domain/ids.js';

/** A proposal awaiting review, with the whole turn it cites so a reviewer sees the quote in context. */
export interface PendingProposal {
  fact: Fact;
  citedTurn: Turn | null;
  /**
   * The gate's verdict on the stored claim and quote against the cited user turn, read again now;
   * null for an action or a summary (no quote verdict) or when the turn is missing. A row stored
   * without a verdict is read again too (flagged attested, it claims `asserted`). A verdict that differs from `fact.attestation` was not the gate's
   * (a row written past the gate) or was given by older rules: the reviewer is shown both.
   */
  verdictNow: Attestation | null;
}

/** The write gate: everything that wants to become memory goes through `propose`. */
export interface GateApi {
  /**
   * Checks proposals against the cited user turns of one of the subject's sessions. What passes
   * waits in the pile; what fails is dropped with a code, and logged. An item that is not a
   * `Proposal` at run time (a JavaScript caller's, or a model's JSON) is dropped INVALID_PROPOSAL
   * with the rest of the batch judged, never thrown.
   */
  propose(input: {
    sessionId: string;
    proposals: readonly Proposal[];
    proposedBy?: string;
  }): Promise<ProposeResult>;
  /**
   * Proposals awaiting the owner's decision, oldest first, each with the whole turn it cites:
   * all of them, or a page (`limit` default 100, at most 1000; `offset` default 0).
   */
  pile(options?: PageOptions): Promise<PendingProposal[]>;
  /** How many proposals await the owner's decision (one count, no turn read). */
  pileCount(): Promise<number>;
  /** Dropped proposals, newest first: a page (limit default 100, at most 1000; offset default 0). */
  dropped(options?: PageOptions): Promise<DroppedProposal[]>;
  /** How many proposals the subject's log holds, in all. */
  droppedCount(): Promise<number>;
  /**
   * Drops per code per calendar day (YYYY-MM-DD in the subject's time zone) over the last `days`
   * days including today (1 to 366, default 14): oldest day first, then code; only days with drops.
   */
  droppedByDay(options?: { days?: number }): Promise<DroppedDay[]>;
  /**
   * Files a request to forget (the user said "forget that…"): it quotes the user's own words
   * asking, from a user turn of the session (INVALID_ARGUMENT when the turn is not the user's, is
   * forgotten, or does not say them), and names what to forget. Nothing is forgotten until the
   * owner honours it with a signed forget (`owner.forget({ request })`) or declines it; or, when
   * the owner signed a policy that honours the user's requests and this one is within it, at once
   * (status `honoured`). A request left pending says why in `waits`.
   */
  requestForget(input: {
    sessionId: string;
    turn: number;
    quote: string;
    scope: ForgetScope;
    requestedBy?: string;
  }): Promise<ForgetRequest & { waits?: string }>;
  /** Forget requests, newest first (a page: limit default 100), only `status`'s when given. */
  forgetRequests(
    options?: PageOptions & { status?: ForgetRequestStatus },
  ): Promise<ForgetRequest[]>;
}

/** The owner's side: signed decisions, the owner key, and the decision chain. */
export interface OwnerApi {
  /** Approves or rejects one of the subject's proposals with a signed, chained decision. */
  decide(input: {
    proposalId: FactId;
    decision: Decision;
    note?: string;
    /**
     * Approving an older proposal while a newer value for its slot and key is live is
     * NEWER_VALUE_LIVE; `supersede: true` says the older value is meant to replace it.
     */
    supersede?: boolean;
    /**
     * A live fact this approval corrects (a proposal of the same slot and key): the corrected fact
     * is superseded, lineage kept, and the signed note names it, so a fact with no key can be
     * replaced too. FACT_NOT_LIVE when it is not live memory.
     */
    corrects?: FactId;
    /**
     * Approve this text instead of the proposal's: the gate checks it against the same evidence
     * (EDIT_DROPPED, and nothing is signed, when it drops it), it is stored as the owner's
     * proposal (proposedBy `owner (edit of <id>)`), approved with a link whose note names the
     * original, and the original is rejected with a link naming the edit. The answer's `edited`
     * says what was proposed and the gate's verdict on the edited text.
     */
    text?: string;
    signer: OwnerSigner;
  }): Promise<EditedDecision>;
  /**
   * Delegates an action slot with a signed link: `did` facts citing a receipt of one of `tools`
   * go live with no decision of their own. `autoLive: false` (with no tools) revokes it.
   */
  delegate(input: {
    slot: string;
    tools?: readonly string[];
    autoLive?: boolean;
    /**
     * What a receipt-promoted fact of the slot may say: at most `maxChars` characters (default
     * DEFAULT_DELEGATION_MAX_CHARS) and, with `template`, its words in order with each `{}`
     * standing for 1 to 80 characters of one line. Signed with the delegation; a fact beyond it
     * waits in the pile for a decision, and one stored live beyond it is withheld.
     */
    maxChars?: number;
    template?: string;
    signer: OwnerSigner;
  }): Promise<DelegateResult>;
  /**
   * Signs a recorded retraction (an agent's, waiting): the fact it names leaves live memory, on
   * a `retract` link over the row's words. Until then a retraction of a fact the owner approved
   * takes nothing down: the fact stays live, marked disputed. A retraction that names no fact,
   * one signed already, or one of a fact no longer live is refused.
   */
  retract(input: {
    retractionId: RetractionId;
    /** The fact the owner was shown it takes down: refused (RETRACTION_CHANGED) if it names another. */
    factId?: FactId;
    signer: OwnerSigner;
  }): Promise<SignedRetraction>;
  /**
   * Forgets, signed: a turn, a session, a fact with its lineage, everything that holds a phrase,
   * or the whole subject (`scope`). Forgotten turns stay as tombstones ("forgotten by the owner
   * on …"); every other row is deleted, with everything that rests on it (facts citing a turn,
   * summaries citing one, ledger rows, dropped proposals, recall postings, vectors), and then the
   * bytes from the database's files. A live fact the scope did not name is FORGET_CITED unless
   * `withFacts`. docs/TRUST.md, "Forgetting".
   */
  forget(input: {
    /** What to forget; or `request`, an agent's pending forget request to honour. */
    scope?: ForgetScope;
    request?: string;
    withFacts?: boolean;
    signer: OwnerSigner;
  }): Promise<ForgetResult>;
  /**
   * Signs the subject's forget policy (docs/TRUST.md, "Forgetting under a policy"): whether the
   * user's own quoted forget requests are honoured at once (`honourRequests`), and how many days
   * turns are kept (`retainDays`; null keeps them). What is not given stays as it was.
   */
  setForgetPolicy(input: {
    honourRequests?: boolean;
    retainDays?: number | null;
    signer: OwnerSigner;
  }): Promise<{ policy: ForgetPolicy; seq: number; hash: string; root: string }>;
  /** The forget policy the verified chain holds (none on a broken chain), and its link. */
  forgetPolicy(): Promise<PolicyInEffect>;
  /** What the retention rule would forget now; NO_RETENTION_RULE when none is signed. */
  retentionPlan(): Promise<{ plan: ForgetPlan; cutoff: Date }>;
  /**
   * Applies the signed retention rule (no signature needed: a scheduler runs it): turns older
   * than its days are forgotten, except those a fact the owner decided, or that went live, cites.
   * Null when nothing is old enough; NO_RETENTION_RULE when no rule is signed.
   */
  applyRetention(): Promise<PolicyForgetResult | null>;
  /** Declines a pending forget request: nothing is forgotten, and it leaves the pile. */
  declineForget(input: { request: string }): Promise<ForgetRequest>;
  /** What `forget` of `scope` would remove now; nothing is signed or changed. */
  forgetPlan(scope: ForgetScope): Promise<ForgetPlan>;
  /** The owner public key stored for the subject, or null. */
  key(): Promise<{ keyId: string; publicKeyPem: string } | null>;
  /** Stores the subject's owner public key, once. */
  setKey(input: { keyId: string; publicKeyPem: string }): Promise<void>;
  /**
   * Verifies the subject's decision chain. `ownerKey` is the owner's out-of-store anchor (the
   * public half of the key file): a store whose key differs fails at link 1 with KEY_MISMATCH.
   */
  verifyChain(options?: {
    ownerKey?: { keyId: string; publicKeyPem: string };
    /**
     * The last head the owner signed, kept outside the store (the CLI's head file beside the key
     * file): a chain that no longer holds it fails with HEAD_CUT.
     */
    signedHead?: { seq: number; hash: string; root?: string };
    /**
     * The owner's anchor (`keyFileAnchor`): its key as `ownerKey`, and the head it recorded for
     * this store (or for a chain with the same first link) as `signedHead`. With none of these
     * options, the engine's own `anchor` is used, when it was given one.
     */
    anchor?: OwnerAnchor;
  }): Promise<ChainReport>;
}

/** Slots: the declared kinds of memory, each with the rule a proposal must meet. */
export interface SlotsApi {
  /**
   * Declares a slot, or re-declares it unchanged; changing the rule of a slot that holds facts is
   * SLOT_IN_USE. A declaration never makes a slot auto-live (`autoLive: true` is refused): only
   * a signed owner delegation does (`owner.delegate`).
   */
  declare(input: {
    name: string;
    rule: SlotRule;
    autoLive?: boolean;
    /** Only with rule `summary`: `rolling` (the default) or `session`. */
    scope?: SummaryScope;
  }): Promise<SlotDeclaration>;
  /** The subject's declared slots. */
  list(): Promise<SlotDeclaration[]>;
}

/** The integrity of one subject's memory (`facts.integrity`). */
export interface IntegrityReport {
  ok: boolean;
  chain: TrustView['chain'];
  withheld: Array<{ factId: FactId; code: string; reason: string }>;
  unexplained: Array<{ factId: FactId; status: string; code: string; reason: string }>;
  /** Slots whose stored auto-live setting no verified delegation accounts for. */
  delegations: Array<{ slot: string; seq: number | null; code: string; reason: string }>;
  /**
   * One line per problem, then the line saying the read held no anchor when it did not
   * (`chain.unanchored`); empty when ok and anchored.
   */
  warning: string[];
}

/** Facts: what the gate let in, each with its passport. */
export interface FactsApi {
  /**
   * Live memory: the facts a model may be shown, each backed by something the owner signed as it
   * is stored now (a verified approval, or a verified delegation plus its receipt).
   */
  live(): Promise<Fact[]>;
  /**
   * Every fact, whatever its status, for history views; a fact stored as live that does not
   * verify comes back `unverified` (with `integrity`), one whose world time ended `expired`.
   */
  all(): Promise<Fact[]>;
  /**
   * What failed verification, if anything: the chain's break or cut head, the facts stored as
   * live that nothing signed backs (withheld), and approved facts that left live memory with no
   * decision, ledger row or expiry. `warning` is the text the arrival's integrity block shows.
   */
  integrity(): Promise<IntegrityReport>;
  /** One fact or proposal of the subject by id, whatever its status (FACT_NOT_FOUND otherwise). */
  get(factId: FactId): Promise<Fact>;
}
