import { defineCommand } from '../command.js';

/**
 * `reindex`: opens the store with an outdated recall index rebuilt (instead of refused with
 * REINDEX_REQUIRED), and says whether it was; a current index is left as it is.
 */
export const reindexCommand = defineCommand({
  path: ['reindex'],
  summary: 'Rebuilds the recall index when it was made by another version of the text analysis.',
  options: {},
  async run(ctx) {
    const progress = ctx.io.stderrIsTTY
      ? (p: { done: number; total: number }) => {
          ctx.io.stderr(`\rreindexing: ${p.done}/${p.total}${p.done === p.total ? '\n' : ''}`);
        }
      : undefined;
    const reindexed = await ctx.withEngine(false, async (engine) => engine.reindexed, {
      reindex: true,
      ...(progress === undefined ? {} : { onReindexProgress: progress }),
    });
    const doc =
      reindexed === null
        ? { reindexed: false, turns: 0, facts: 0 }
        : { reindexed: true, turns: reindexed.turns, facts: reindexed.facts };
    ctx.print(doc, () =>
      reindexed === null
        ? 'the recall index is current; nothing to do'
        : `reindexed ${reindexed.turns} turn(s) and ${reindexed.facts} fact(s)`,
    );
  },
});
