import type { FactOrigin, FactStatus } from '../domain/fact.js';
import type { Receipt } from '../domain/receipt.js';
import type { TurnRole } from '../domain/turn.js';
import type { RankParams } from './lexical-rank.js';

/** The kinds of memory recall returns. */
export const RECALL_KINDS = ['turn', 'fact'] as const;
/** A kind of memory recall returns: a recorded turn or a fact. */
export type RecallKind = (typeof RECALL_KINDS)[number];

/** How one recall runs. The subject is the handle's. */
export interface RecallOptions {
  /** How many items (1–200, default 10). */
  k?: number;
  /** Only this session's turns, and facts whose evidence is in it (a session of the subject). */
  session?: string;
  /** Also facts that are not live (proposed, rejected, retracted, superseded, …), labelled. */
  includeHistory?: boolean;
  /** Which kinds of memory (default both). */
  kinds?: readonly RecallKind[];
  /** Ranking parameters, for benchmarks and ablations. */
  params?: Partial<RankParams>;
  /**
   * Also rank by vector similarity (fused with the lexical ranking). Default: when the engine
   * has an embedder. `true` without one is an error; `false` keeps recall lexical.
   */
  vectors?: boolean;
}

/** Where a recalled item comes from and what it is worth as evidence. */
export interface RecallPassport {
  /** `turn` for a recorded turn; a fact's origin otherwise. */
  origin: 'turn' | FactOrigin;
  /** Turns and did/saw facts are primary evidence; inferred and summarized facts are not. */
  primary: boolean;
  /** `recorded` for a turn; a fact's status. */
  status: 'recorded' | FactStatus;
  /** When the turn was said, or the fact recorded (ISO 8601). */
  date: string;
  /** The turn's session, or the session of the fact's evidence turn. */
  sessionId: string | null;
  /** The turn's seq, or the seq of the fact's evidence turn. */
  turn: number | null;
  /** A turn's role. */
  role?: TurnRole;
  /** A turn's speaker, when it has one. */
  speaker?: string | null;
  /** An assistant turn's receipt: what tools ran and what they returned. */
  receipt?: Receipt | null;
  /** A fact's slot. */
  slot?: string;
  /** A fact's key within its slot, when it has one. */
  key?: string | null;
  /** Whether a fact's evidence attests its text. */
  attested?: boolean;
  /** A fact's evidence: the turn, the quote, or the tool. */
  evidence?: { turnId: string | null; quote: string | null; tool: string | null };
  /** When a fact became true, when known. */
  validFrom?: string | null;
  /** When a fact stopped being true, when known. */
  validTo?: string | null;
}

/** One recalled memory: a turn or a fact, its text, its score and its passport. */
export interface RecallItem {
  kind: RecallKind;
  id: string;
  text: string;
  /** Fused rank score: higher first. Comparable within one answer only. */
  score: number;
  passport: RecallPassport;
}

/** How one `embedPending` call runs. The subject is the handle's. */
export interface EmbedPendingOptions {
  /** At most this many turns and this many facts in one call (default 1,000; up to 100,000). */
  limit?: number;
  /** Texts per embedder call (default 64). */
  batchSize?: number;
}

/** What one `embedPending` call stored. */
export interface EmbedPendingResult {
  /** The embedder's model name. */
  model: string;
  /** Turn vectors stored by this call. */
  turns: number;
  /** Fact vectors stored by this call. */
  facts: number;
  /** Turns or facts still without a vector for this model (the limit stopped the call). */
  remaining: boolean;
}

/** Recall: ranked turns and facts for a query, each with its passport. Reads only. */
export interface RecallApi {
  /**
   * Ranked memories of the subject for a query, each with its passport. Reads only; never
   * writes. A `session` that is not one of the subject's is SESSION_NOT_FOUND.
   */
  search(query: string, options?: RecallOptions): Promise<RecallItem[]>;
}

/** Vectors: made on demand, never by a read. */
export interface VectorsApi {
  /**
   * Embeds the subject's turns and facts that have no vector for the embedder's model yet, and
   * stores the vectors (NO_EMBEDDER when the engine has no embedder).
   */
  embedPending(options?: EmbedPendingOptions): Promise<EmbedPendingResult>;
}
