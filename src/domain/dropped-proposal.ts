/**
 * A proposal the write gate refused, as logged (append-only): it never reached the pile, and the
 * log says why, so a refusal is visible rather than silent.
 */
export interface DroppedProposal {
  id: string;
  /** The session it was proposed in, if any. */
  sessionId: string | null;
  slot: string;
  text: string;
  /** The proposal exactly as it arrived. */
  proposal: unknown;
  /** The gate's drop code (one of `DROP_CODES`). */
  code: string;
  /** The reason, in words. */
  reason: string;
  /** Who proposed it (the agent, a reflection pass, …). */
  proposedBy: string;
  droppedAt: Date;
}
