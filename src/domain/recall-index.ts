import type { FactOrigin, FactStatus } from './fact.js';
import type { Receipt } from './receipt.js';
import type { TurnRole } from './turn.js';

/**
 * The shapes of the recall index and of the rows the store hands recall: lexical statistics and
 * postings, the read port lexical search ranks through, recalled turns and facts, and the texts
 * waiting for a vector. The store produces them; recall consumes them.
 */

/** One turn holding a term: where it is, how often the term occurs, how long the turn is. */
export interface Posting {
  session: string;
  seq: number;
  tf: number;
  len: number;
}

/** How common a term is in one subject's turns. */
export interface TermStat {
  /** Turns holding the term. */
  df: number;
  /** Sessions holding the term. */
  sdf: number;
}

/** One subject's corpus as a whole. */
export interface CorpusStats {
  turns: number;
  sessions: number;
  /** Sum of every turn's length in terms. */
  totalLen: number;
}

/** One session's size: its turns and its length in terms. */
export interface SessionStat {
  turns: number;
  len: number;
}

/** A recalled turn as the store has it. */
export interface RecalledTurn {
  id: string;
  role: TurnRole;
  speaker: string | null;
  content: string;
  corrective: boolean;
  receipt: Receipt | null;
  recordedAt: Date;
  /** Its session's title (null: none), when the read that brought the turn had it. */
  sessionTitle?: string | null;
}

/** What a turn contributes once it is a candidate: its terms, speaker and date. */
export interface TurnMeta {
  session: string;
  seq: number;
  /** The row recall returns for the turn (the same read brings it). */
  turn: RecalledTurn;
  /** Only when asked for (feedback, or the time words of a "when" question); else empty. */
  terms: readonly string[];
}

/** The reads lexical search makes. The store implements it in SQL; it never writes. */
export interface LexicalIndexPort {
  /** Corpus statistics and the statistics of `terms`, read together. */
  lookup(terms: readonly string[]): Promise<{ corpus: CorpusStats; terms: Map<string, TermStat> }>;
  /**
   * All postings of `terms`, or only those inside `sessions` when it is given, with the
   * statistics of every session they fall in when `withSessions` (else an empty map).
   */
  postings(
    terms: readonly string[],
    sessions: readonly string[] | null,
    withSessions: boolean,
  ): Promise<{ postings: Map<string, Posting[]>; sessions: Map<string, SessionStat> }>;
  /** Each session's summed term frequency for each of `terms` (the database adds them up). */
  sessionTotals(terms: readonly string[]): Promise<Map<string, { session: string; tf: number }[]>>;
  /**
   * Optional: what `sessionTotals` and then `postings` within the chosen sessions give, in one
   * read. The `n` sessions of the subject (other than `except`) with the highest sum over
   * `pick[i]` of `weights[i] * tf / (tf + 1)`, ties by id, and every posting of `terms` inside
   * them with the statistics of the sessions they fall in.
   */
  candidatePostings?(
    pick: readonly string[],
    weights: readonly number[],
    n: number,
    terms: readonly string[],
    except: string | null,
  ): Promise<CandidatePostings>;
  /** Speaker and date of some turns; their terms too when `withTerms` (else empty). */
  turns(keys: readonly { session: string; seq: number }[], withTerms: boolean): Promise<TurnMeta[]>;
}

/** The candidate sessions chosen (best first), and the postings and statistics read in them. */
export interface CandidatePostings {
  sessions: string[];
  postings: Map<string, Posting[]>;
  stats: Map<string, SessionStat>;
}

/**
 * A `candidatePostings` read made ahead of the question, with the arguments it was made for: the
 * picked terms (in the order the rule picks them), their weights, how many sessions, the terms
 * read and the session left out. It answers a question with the same arguments only.
 */
export interface CandidateReadAhead {
  pick: string[];
  weights: number[];
  n: number;
  terms: string[];
  except: string | null;
  read: CandidatePostings;
}

/** A fact candidate for recall: its passport columns and terms. */
export interface RecalledFactRow {
  id: string;
  slot: string;
  key: string | null;
  text: string;
  origin: FactOrigin;
  status: FactStatus;
  attested: boolean;
  evidenceTurnId: string | null;
  evidenceSessionId: string | null;
  evidenceSeq: number | null;
  evidenceQuote: string | null;
  evidenceTool: string | null;
  recordedAt: Date;
  statusAt: Date;
  validFrom: Date | null;
  validTo: Date | null;
  terms: string[];
}

/** A turn that has no vector yet for some model, with the text to embed. */
export interface PendingTurn {
  session: string;
  seq: number;
  speaker: string | null;
  content: string;
}

/** A fact that has no vector yet for some model. */
export interface PendingFact {
  id: string;
  text: string;
}

/** pgvector's (and memledger's) longest vector. */
export const MAX_VECTOR_DIMS = 16_000;

/** How vector distances are computed: by pgvector in C, or by plain SQL over `real[]`. */
export type VectorMath = 'pgvector' | 'plain';
