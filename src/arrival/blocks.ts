import { EngineError } from '../domain/errors.js';
import { TIERS, type ShownMemory, type Tier } from '../domain/manifest.js';

/** What a block renders from: the arrival's subject, session, surface, message, time and tools. */
export interface BlockContext {
  subjectId: string;
  sessionId: string | null;
  surface: string;
  /**
   * The incoming user message the host passed to `assemble` (null when none, or blank): the
   * `relevant` block recalls for it. Arrival never records it; the host records the turn.
   */
  message: string | null;
  /** The engine clock's reading for this arrival. */
  now: Date;
  /** IANA zone the subject's dates render in. */
  timeZone: string;
  /** The tools bound on this surface (the capability map reads these, not the registry). */
  tools: readonly string[];
}

/** One named block. It never fails the arrival: on error or timeout its fallback stands in. */
export interface ArrivalBlock {
  name: string;
  tier: Tier;
  timeoutMs: number;
  fallback: string;
  /** The block's text; memledger's own blocks also name the memories it shows. */
  render(ctx: BlockContext): Promise<string | BlockOutput>;
}

/** A block's text and the memories it shows. */
export interface BlockOutput {
  text: string;
  shown: ShownMemory[];
}

/** A block as it was given: its text (or fallback) and the text's SHA-256. */
export interface RenderedBlock {
  name: string;
  tier: Tier;
  text: string;
  sha256: string;
  /** True when the fallback stands in for a block that threw or outlived its timeout. */
  degraded: boolean;
  /** Why it degraded: 'timeout' or the error message. */
  reason: string | null;
  /** The memories its text shows (none for a fallback). */
  shown: ShownMemory[];
}

/** How long a block may take before its fallback stands in. */
export const DEFAULT_BLOCK_TIMEOUT_MS = 1500;

/** Two blocks of one arrival share a name: the manifest and its diff could not tell them apart. */
export function blockExists(name: string): EngineError {
  return new EngineError('BLOCK_EXISTS', `an arrival block is already named "${name}"`, {
    data: { field: 'name' },
  });
}

function withTimeout(
  block: ArrivalBlock,
  ctx: BlockContext,
): Promise<BlockOutput | { failed: string }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ failed: 'timeout' }), block.timeoutMs);
    let pending: Promise<string | BlockOutput>;
    try {
      pending = block.render(ctx);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (out) => {
        clearTimeout(timer);
        if (typeof out === 'string') resolve({ text: out, shown: [] });
        else if (typeof out?.text === 'string') resolve({ text: out.text, shown: out.shown });
        else resolve({ failed: 'the block returned no text' });
      },
      (err: unknown) => {
        clearTimeout(timer);
        resolve({ failed: err instanceof Error ? err.message : String(err) });
      },
    );
  });
}

/**
 * Runs every block at once, each with its own timeout and fallback, and returns them in tier
 * order (declaration order within a tier). Hashes are taken over the rendered text.
 */
export async function runBlocks(
  blocks: readonly ArrivalBlock[],
  ctx: BlockContext,
  sha256Hex: (text: string) => string,
): Promise<RenderedBlock[]> {
  const seen = new Set<string>();
  for (const b of blocks) {
    if (seen.has(b.name)) throw blockExists(b.name);
    seen.add(b.name);
  }
  const outcomes = await Promise.all(blocks.map((b) => withTimeout(b, ctx)));
  const rendered = blocks.map((b, i): RenderedBlock => {
    const o = outcomes[i] ?? { failed: 'no outcome' };
    const text = 'text' in o ? o.text : b.fallback;
    return {
      name: b.name,
      tier: b.tier,
      text,
      sha256: sha256Hex(text),
      degraded: !('text' in o),
      reason: 'failed' in o ? o.failed : null,
      shown: 'shown' in o ? o.shown : [],
    };
  });
  return TIERS.flatMap((tier) => rendered.filter((r) => r.tier === tier));
}
