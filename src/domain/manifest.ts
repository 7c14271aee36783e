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

/** What changed between an arrival and the previous one on its surface. */
export interface ManifestDiff {
  /** The previous arrival's id; null when this was the surface's first. */
  from: string | null;
  to: string;
  surface: string;
  blocks: { added: string[]; removed: string[]; changed: string[] };
  tools: { added: string[]; removed: string[]; countBefore: number | null; countAfter: number };
}
