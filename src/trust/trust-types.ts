import type { OwnerAnchor } from '../domain/anchor.js';
import type { ChainReport } from '../domain/decision-chain.js';
import type { ServerSnapshot, TrustView } from '../domain/trust.js';
import type { ChainState } from '../domain/chain-state.js';
import type { SqlExecutor } from '../store/sql-client.js';
import type { ChainProblem, SignedHead } from './chain-audit.js';

/**
 * Trust: what a model may be shown of a subject's memory, decided where memory is read
 * (docs/TRUST.md). One per engine; every read (facts, arrival, recall, the gate's DUPLICATE rule)
 * and every owner decision goes through it. Its parts: the incremental verifier and its cache
 * (trust-verifier.ts), the SQL it reads (trust-sql.ts), and the full audit (chain-audit.ts).
 */
export interface TrustReader {
  /**
   * The subject's trust view now: live facts are only those something the owner signed backs.
   * `taken`: the server's snapshot as a statement of the same request saw it, sent once the
   * request began (arrival's opening read carries it): the check whether anything was written
   * since the kept view is made against it, with no statement of its own. A read given one is
   * never shared with a later caller, whose request may have begun after it was taken.
   */
  view(subjectId: string, taken?: Promise<ServerSnapshot>): Promise<TrustView>;
}

/** The trust state of one subject, held by `withSubject` (an owner decision in a transaction). */
export interface HeldTrust {
  /** The verified chain as `db` sees it now (the chain a new link is appended to). */
  chain(db: SqlExecutor): Promise<ChainState>;
  /** The trust view as `db` sees it now. */
  view(db: SqlExecutor): Promise<TrustView>;
  /**
   * The one check an owner decision makes, in its transaction: the chain a new link is appended
   * to, and what the decision must refuse (CHAIN_BROKEN; null: nothing). See `decisionProblem`.
   */
  check(db: SqlExecutor): Promise<{ chain: ChainState; problem: ChainProblem | null }>;
}

/** What `audit` checks the store against, besides the engine's own anchor. */
export interface AuditOptions {
  ownerKey?: { keyId: string; publicKeyPem: string };
  signedHead?: SignedHead;
  anchor?: OwnerAnchor;
}

export interface Trust extends TrustReader {
  /**
   * Runs `fn` with the subject's trust state held: no other read of this subject refreshes it
   * meanwhile, so a caller in a transaction can check (through its `tx`) and then act on it.
   */
  withSubject<T>(subjectId: string, fn: (held: HeldTrust) => Promise<T>): Promise<T>;
  /** The owner's anchor for the subject, as this process holds it; null when it holds none. */
  anchor(subjectId: string): OwnerAnchor | null;
  /**
   * `chain verify`: the full check from link 1 (every link, every decided proposal's content,
   * every status, every delegation), against the owner's key and head: `options`, or with none
   * of them the engine's anchor; then a head this process verified that the store no longer holds.
   */
  audit(subjectId: string, options: AuditOptions): Promise<ChainReport>;
  /**
   * The full check from link 1 against the engine's anchor, as `db` sees the store: an import
   * checks the subject it wrote before it commits.
   */
  auditWithin(db: SqlExecutor, subjectId: string): Promise<ChainReport>;
  /** ModuleDeps.wroteNeutral: the engine's writers say here what they wrote. */
  wroteNeutral(xid: string | null | undefined): void;
}
