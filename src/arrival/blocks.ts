/**
 * Tiers in prompt order, most stable first, so a prompt cache can stop after any stable tier
 * (seed 000 §2.1): identity and standing instructions; live facts and living summaries; this
 * session's neighbourhood; what changed most recently and the current time.
 */
export const TIERS = ['static', 'semi-stable', 'session', 'volatile'] as const;
export type Tier = (typeof TIERS)[number];

export interface BlockContext {
  subjectId: string;
  sessionId: string | null;
  surface: string;
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
  render(ctx: BlockContext): Promise<string>;
}

export interface RenderedBlock {
  name: string;
  tier: Tier;
  text: string;
  sha256: string;
  /** True when the fallback stands in for a block that threw or outlived its timeout. */
  degraded: boolean;
  /** Why it degraded: 'timeout' or the error message. */
  reason: string | null;
}

export const DEFAULT_BLOCK_TIMEOUT_MS = 1500;

function withTimeout(
  block: ArrivalBlock,
  ctx: BlockContext,
): Promise<{ text: string } | { failed: string }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ failed: 'timeout' }), block.timeoutMs);
    let pending: Promise<string>;
    try {
      pending = block.render(ctx);
    } catch (err) {
      pending = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    pending.then(
      (text) => {
        clearTimeout(timer);
        resolve(typeof text === 'string' ? { text } : { failed: 'the block returned no text' });
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
    if (seen.has(b.name)) throw new Error(`two arrival blocks are named "${b.name}"`);
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
    };
  });
  return TIERS.flatMap((tier) => rendered.filter((r) => r.tier === tier));
}
