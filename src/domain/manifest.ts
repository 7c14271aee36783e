/**
 * Tiers in prompt order, most stable first, so a prompt cache can stop after any stable tier
 * (seed 000 §2.1): identity and standing instructions; live facts and living summaries; this
 * session's neighbourhood; what changed most recently and the current time.
 */
export const TIERS = ['static', 'semi-stable', 'session', 'volatile'] as const;
/** One of `TIERS`. */
export type Tier = (typeof TIERS)[number];

/** One block of an arrival as its manifest records it. */
export interface ManifestBlock {
  name: string;
  tier: Tier;
  /** SHA-256 of the rendered text, hex. */
  sha256: string;
  degraded: boolean;
  chars: number;
}

/** What an arrival gave, as recorded in the introspection ledger. */
export interface ArrivalManifest {
  id: string;
  subjectId: string;
  surface: string;
  sessionId: string | null;
  blocks: ManifestBlock[];
  tools: string[];
  /** How many tools were bound (recorded beside the names, as the introspection ledger asks). */
  toolCount: number;
  /** The names of the blocks whose fallback stood in. */
  degraded: string[];
  totalChars: number;
  createdAt: Date;
  /** The verified decision chain this arrival saw (length and head hash); null when empty. */
  chain?: { length: number; head: string } | null;
}

/**
 * One memory an arrival's text shows (a live fact, or a recalled turn), with the line it shows
 * and its passport: what a host cites beside the model's answer (a source per memory shown).
 */
export interface ShownMemory {
  /** The block that shows it (`live_facts`, `relevant`). */
  block: string;
  kind: 'fact' | 'turn';
  id: string;
  /** The line as the arrival shows it, passport first. */
  line: string;
  passport: {
    /** `turn` for a recorded turn; a fact's origin otherwise. */
    origin: 'turn' | 'did' | 'saw' | 'inferred' | 'summarized';
    /** When the turn was said, or when the fact holds from (else was recorded), ISO 8601. */
    date: string;
    /** The turn's session, or the session of the fact's evidence turn. */
    sessionId: string | null;
    /** The turn's seq, or the seq of the fact's evidence turn. */
    turn: number | null;
    /** A fact's slot. */
    slot?: string;
    /** A turn's role. */
    role?: string;
    /** A fact's evidence: the user's quoted words, or the tool on a receipt. */
    quote?: string | null;
    tool?: string | null;
  };
}

/** A shown memory before its block names it. */
export type ShownLine = Omit<ShownMemory, 'block'>;

/** A live fact as a block shows it: its line and its passport. */
export function shownFact(
  f: {
    id: string;
    slot: string;
    origin: ShownMemory['passport']['origin'];
    validFrom: Date | null;
    recordedAt: Date;
    evidence: {
      sessionId: string | null;
      seq: number | null;
      quote: string | null;
      tool: string | null;
    };
  },
  line: string,
): ShownLine {
  return {
    kind: 'fact',
    id: f.id,
    line,
    passport: {
      origin: f.origin,
      date: (f.validFrom ?? f.recordedAt).toISOString(),
      sessionId: f.evidence.sessionId,
      turn: f.evidence.seq,
      slot: f.slot,
      quote: f.evidence.quote,
      tool: f.evidence.tool,
    },
  };
}

/** What changed between an arrival and the previous one on its surface. */
export interface ManifestDiff {
  /** The previous arrival's id; null when this was the surface's first. */
  from: string | null;
  to: string;
  surface: string;
  blocks: { added: string[]; removed: string[]; changed: string[] };
  tools: { added: string[]; removed: string[]; countBefore: number | null; countAfter: number };
}
