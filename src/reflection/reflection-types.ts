import type { PageOptions } from '../domain/input.js';
import type { ProposeResult } from '../gate/proposal-gate.js';

/** One reflection run: which prompt and model, over which turns, and what the gate made of it. */
export interface ReflectionRun {
  id: string;
  sessionId: string;
  /** `reflect-` and 12 hex digits of the prompt template's SHA-256. */
  promptVersion: string;
  provider: string;
  /** The model the provider says answered. */
  model: string;
  /** The turns shown to the model (seq, inclusive). */
  turns: { from: number; to: number };
  /** How many proposals the model's answer held (0 is a valid outcome). */
  proposed: number;
  /** How many of them the gate dropped; the rest reached the pile. */
  dropped: number;
  usage: { inputTokens: number; outputTokens: number };
  durationMs: number;
  createdAt: Date;
}

/** A run and the gate's verdict on each of its proposals (as `gate.propose` answers). */
export interface ReflectionResult extends ProposeResult {
  reflection: ReflectionRun;
}

/**
 * What one prompt version's proposals became, per slot: how many the model proposed, how many the
 * gate dropped (per code), and where the rest stand now. `live` counts only facts that verify
 * against the owner's signatures; a fact whose row says active but does not verify is `unverified`.
 */
export interface ReflectionOutcome {
  promptVersion: string;
  slot: string;
  proposed: number;
  dropped: Record<string, number>;
  /** Reached the pile (whatever happened after): stored as a fact. */
  reachedPile: number;
  /** Of those, the ones the gate flagged unattested. */
  unattested: number;
  pending: number;
  live: number;
  rejected: number;
  /** Superseded, retracted, expired or unverified. */
  other: number;
}

/** memledger's own reflection: a model proposes, the gate checks, the owner decides. */
export interface ReflectionApi {
  /**
   * Shows the model a session's turns (with roles and receipts), the declared slots and the live
   * facts, and puts every proposal of its answer through the gate unchanged, in one transaction
   * with the run's record and its usage. LLM_NOT_CONFIGURED without a model; LLM_FAILED when the
   * call or its answer fails (nothing is written). `from`/`to` limit the turns (seq, inclusive).
   * With `rehearse`, everything runs as usual (the call, the gate, the run's record) in a
   * transaction that is rolled back: the result is what would have been stored, and nothing is
   * (no pile, no dropped log, no run, no usage); its ids name rows that were never kept.
   */
  reflect(input: {
    sessionId: string;
    from?: number;
    to?: number;
    rehearse?: boolean;
  }): Promise<ReflectionResult>;
  /** Past runs, newest first, optionally of one session (limit default 20, at most 1000). */
  list(options?: PageOptions & { sessionId?: string }): Promise<ReflectionRun[]>;
  /** Per prompt version and slot, what the runs' proposals became (optionally one version). */
  outcomes(options?: { promptVersion?: string }): Promise<ReflectionOutcome[]>;
}
