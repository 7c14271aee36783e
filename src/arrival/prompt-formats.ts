import { TIERS, type Tier } from '../domain/manifest.js';
import type { RenderedBlock } from './blocks.js';

function tierText(blocks: readonly RenderedBlock[], tier: Tier): string {
  return blocks
    .filter((b) => b.tier === tier && b.text.trim() !== '')
    .map((b) => b.text)
    .join('\n\n');
}

/** The whole prompt text, tiers in order. */
export function arrivalText(blocks: readonly RenderedBlock[]): string {
  return TIERS.map((t) => tierText(blocks, t))
    .filter((t) => t !== '')
    .join('\n\n');
}

/**
 * Anthropic-style `system` content: one text part per tier, with a cache breakpoint after each
 * stable tier (static, semi-stable, session); the volatile tier is never cached.
 */
export function anthropicSystem(
  blocks: readonly RenderedBlock[],
): Array<{ type: 'text'; text: string; cache_control?: { type: 'ephemeral' } }> {
  return TIERS.map((tier) => ({ tier, text: tierText(blocks, tier) }))
    .filter((p) => p.text !== '')
    .map((p) =>
      p.tier === 'volatile'
        ? { type: 'text' as const, text: p.text }
        : { type: 'text' as const, text: p.text, cache_control: { type: 'ephemeral' as const } },
    );
}

/**
 * OpenAI-style system message: content parts in tier order, stable tiers first, so automatic
 * prefix caching can reuse everything before the volatile tier.
 */
export function openAISystem(blocks: readonly RenderedBlock[]): {
  role: 'system';
  content: Array<{ type: 'text'; text: string }>;
} {
  return {
    role: 'system',
    content: TIERS.map((tier) => tierText(blocks, tier))
      .filter((text) => text !== '')
      .map((text) => ({ type: 'text' as const, text })),
  };
}
