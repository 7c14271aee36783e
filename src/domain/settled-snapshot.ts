/**
 * The ground truth the settled-facts block shows (seed 000, getSettledFactsForPrompt). Every
 * date arrives already formatted by SQL (to_char in the subject's zone).
 */
export interface SettledSnapshot {
  /** The true count of open commitments, and the latest few. */
  openCommitments: { total: number; latest: Array<{ title: string; due: string | null }> };
  /** Confirmed actions of the last 48 hours, newest first. */
  confirmedActions: Array<{ tool: string; surface: string; target: string; completed: string }>;
  /** The latest retractions, newest first. */
  retractions: Array<{ id?: string; claim: string; corrected: string; verdict: string }>;
  falsifiersDue: { count: number; oldestDue: string | null };
  /** Proposals awaiting the owner's review. */
  /**
   * `verdicts`: the pending proposals by the gate's verdict on their quote, read again from the
   * stored quote and turn (asserted, presupposed, …; `attested`/`unattested` for actions,
   * summaries and facts stored before typed attestation).
   */
  pile: {
    count: number;
    oldestHours: number | null;
    verdicts?: Readonly<Record<string, number>>;
    /**
     * How many stored a verdict the gate does not give their quote now (a row written past the
     * gate, or by older rules): counted by the verdict now, and said so.
     */
    differing?: number;
  };
}
