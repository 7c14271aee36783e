import type { FactId } from '../domain/ids.js';
import type { PageOptions } from '../domain/input.js';
import type { Citation } from '../domain/fact.js';
import type { SentenceVerdict } from '../domain/summary-check.js';

/** One sentence the model wrote, as the check judged it. */
export interface SummarySentence {
  position: number;
  text: string;
  /** The turns it rests on (a kept sentence: the previous version's citations). */
  citations: Citation[];
  verdict: SentenceVerdict;
  reason: string;
}

/** One summarize run: which version it folded, what it stored, what changed. */
export interface Summary {
  id: string;
  aspect: string;
  /** The session whose turns the model was shown. */
  sessionId: string;
  /** The version this one folds (null for an aspect's first summary). */
  previousId: string | null;
  /**
   * The fact holding the supported sentences, origin `summarized`, in the pile until the owner
   * decides; null when no sentence was supported.
   */
  factId: FactId | null;
  /** The fact's status now (null when none was stored). Live only if the owner's chain says so. */
  factStatus: string | null;
  /** The supported and kept sentences, as the fact's text ('' when none). */
  text: string;
  sentences: SummarySentence[];
  /** What changed from the previous version, in sentences. */
  changes: { kept: number; added: number; leftOut: number };
  promptVersion: string;
  provider: string;
  model: string;
  usage: { inputTokens: number; outputTokens: number };
  createdAt: Date;
}

/** memledger's living summaries: a model writes, every sentence is checked, the owner decides. */
export interface SummariesApi {
  /**
   * Shows the model one session's numbered turns (the subject's newest session when none is
   * given), the aspect and its previous version, and checks every sentence of the answer against
   * the turns it cites: a cited turn must be a user turn the model was shown, share words with
   * the sentence, and, with the other cited turns, say it (`isAttestedBy`). What is supported is
   * stored as one `summarized` fact in the pile; every sentence is recorded with its verdict. One
   * transaction with the usage. LLM_NOT_CONFIGURED without a model, LLM_FAILED when the call or
   * its answer fails (nothing is written), SLOT_NOT_FOUND when `aspect` is no summary aspect.
   * With `rehearse`, everything runs as usual (the call, the check, the fact and the run) in a
   * transaction that is rolled back: the result is what would have been stored, and nothing is
   * (no fact in the pile, no summary, no usage); its ids name rows that were never kept.
   */
  summarize(input: { aspect: string; sessionId?: string; rehearse?: boolean }): Promise<Summary>;
  /** Past runs, newest first, optionally of one aspect (limit default 20, at most 1000). */
  list(options?: PageOptions & { aspect?: string }): Promise<Summary[]>;
}
