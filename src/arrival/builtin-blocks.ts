import type { ShownLine, Tier } from '../domain/manifest.js';
import type { SettledSnapshot } from '../domain/settled-snapshot.js';
import type { RecentSession } from '../store/arrival-sql.js';
import { shownInline } from '../domain/shown-text.js';
import type { ArrivalBlock, BlockContext, BlockOutput } from './blocks.js';
import { formatRelevant, RELEVANT_FALLBACK, RELEVANT_K } from './relevant-memories.js';
import { formatSettledFacts } from './settled-facts.js';

/**
 * The reads the built-in blocks make (implemented over the store by ArrivalSql and the trust
 * view). The settled facts, the recent sessions and the clock come from one read of the store.
 */
export interface ArrivalReader {
  /** The newest `limit` verified live facts, rendered, and how many verify in all. */
  liveFactLines(ctx: BlockContext, limit: number): Promise<{ lines: ShownLine[]; total: number }>;
  /**
   * One line per integrity problem (a broken or cut chain, withheld facts), and the line saying the
   * read was not anchored; none when clean and anchored. `problem`: whether anything failed.
   */
  integrity(ctx: BlockContext): Promise<{ lines: string[]; problem: boolean }>;
  /**
   * The lines of the `limit` memories (turns and verified live facts) recall ranks highest for
   * the message, each with its passport; turns of the arrival's own session left out.
   */
  relevantLines(ctx: BlockContext, message: string, limit: number): Promise<ShownLine[]>;
  /** The RECENT_SESSIONS most recently active sessions other than the arrival's, newest first. */
  recentSessions(ctx: BlockContext): Promise<RecentSession[]>;
  /** How many turns the arrival's session holds (null without a session). */
  sessionTurns(ctx: BlockContext): number | null;
  /** The ground truth the settled-facts block shows, as of the arrival's time, in its zone. */
  settled(ctx: BlockContext): Promise<SettledSnapshot>;
  /** The arrival's time in its zone, `YYYY-MM-DD HH24:MI (Dy)`. */
  formatTime(ctx: BlockContext): Promise<string>;
}

/** How many other sessions the recent-sessions block lists. */
export const RECENT_SESSIONS = 5;

/** How to read an arrival: the second static block, written by memledger, not by the host. */
export const STANDING_RULES = `[How to read this context (written by memledger)]
Lines about what I know carry a passport: (origin, date). did = my own action, backed by a tool receipt; saw = told by the user, attested against their words; inferred and summarized never outrank did and saw. A line that begins (turn, date, session …, #n role) quotes a recorded turn: a record of what was said then, not a checked fact.
Lines of the form [[RECEIPT recorded by memledger, not written by the model: …]] sit beside my past replies and say which tools ran, or that none did. They are evidence; I never write one.
"I have no record of that" is a correct answer when no record exists; it is not a failure to recall.`;

const LIVE_FACT_LIMIT = 40;

/** memledger's own blocks, in tier order: identity (when the host gives one) through the time. */
export function builtinBlocks(
  reader: ArrivalReader,
  options: { identity: string | null; timeoutMs: number },
): ArrivalBlock[] {
  const block = (
    name: string,
    tier: Tier,
    fallback: string,
    render: (ctx: BlockContext) => Promise<string | BlockOutput>,
  ): ArrivalBlock => ({
    name,
    tier,
    timeoutMs: options.timeoutMs,
    fallback,
    render,
  });
  const blocks: ArrivalBlock[] = [];
  if (options.identity !== null) {
    const identity = options.identity;
    blocks.push(block('identity', 'static', identity, async () => identity));
  }
  blocks.push(
    block('standing_rules', 'static', STANDING_RULES, async () => STANDING_RULES),
    // The capability map comes from the tools bound here, never from the whole registry.
    // Stored names (tools, surfaces, titles) are shown inline: none can start a line of its own.
    block('capabilities', 'static', '[What I can do here] (tool list unavailable)', async (ctx) =>
      ctx.tools.length === 0
        ? `[What I can do here (surface ${shownInline(ctx.surface)})] No tools are bound on this surface.`
        : `[What I can do here (surface ${shownInline(ctx.surface)}): ${ctx.tools.length} tools]\n${ctx.tools.map(shownInline).join(', ')}`,
    ),
    block(
      'live_facts',
      'semi-stable',
      '[What I know] (live memory unavailable this turn)',
      async (ctx) => {
        const { lines, total } = await reader.liveFactLines(ctx, LIVE_FACT_LIMIT);
        if (total === 0) return '[What I know (live memory)] Nothing yet.';
        const more =
          total > lines.length
            ? `\n…and ${total - lines.length} more live facts (ask recall).`
            : '';
        return {
          text: `[What I know (live memory, ${total} ${total === 1 ? 'fact' : 'facts'}; each line: origin, date)]\n${lines.map((l) => l.line).join('\n')}${more}`,
          shown: lines.map((l) => ({ block: 'live_facts', ...l })),
        };
      },
    ),
    block(
      'recent_sessions',
      'session',
      '[Recent sessions] (unavailable this turn)',
      async (ctx) => {
        const recent = await reader.recentSessions(ctx);
        const here = reader.sessionTurns(ctx);
        const lines = recent.map(
          (s) =>
            `- ${shownInline(s.title ?? s.id)}: ${s.turns} turns${s.last === null ? '' : `, last ${s.last}`}`,
        );
        return [
          here === null ? '[This arrival has no session]' : `[This session: ${here} turns so far]`,
          recent.length === 0 ? '[Recent sessions] none' : `[Recent sessions]\n${lines.join('\n')}`,
        ].join('\n');
      },
    ),
    // Only when the host passed the incoming message; its fallback never says nothing is there.
    block('relevant', 'session', RELEVANT_FALLBACK, async (ctx) => {
      if (ctx.message === null) return '';
      const lines = await reader.relevantLines(ctx, ctx.message, RELEVANT_K);
      return {
        text: formatRelevant(
          lines.map((l) => l.line),
          ctx.sessionId !== null,
          ctx.message,
        ),
        shown: lines.map((l) => ({ block: 'relevant', ...l })),
      };
    }),
    // Only when something failed verification; its fallback is loud too.
    block(
      'integrity',
      'volatile',
      "[Integrity warning (written by memledger)] The check of memory against the owner's signatures did not finish this turn: treat what I know as unverified.",
      async (ctx) => {
        const integrity = await reader.integrity(ctx);
        // they quote stored ids, slots and reasons: on one line, with what does not show visible
        const lines = integrity.lines.map((line) => shownInline(line));
        const problem = integrity.problem;
        if (lines.length === 0) return '';
        if (!problem) return `[Integrity note (written by memledger)] ${lines.join(' ')}`;
        return `[Integrity warning (written by memledger)] Part of the stored memory failed verification against the owner's signatures; it is withheld from this context and must not be relied on. The owner should run \`memledger chain verify\`.\n${lines.join('\n')}`;
      },
    ),
    block(
      'settled_facts',
      'volatile',
      '[Settled facts & recent ground truth] (unavailable this turn: do not assume nothing changed)',
      async (ctx) => formatSettledFacts(await reader.settled(ctx)),
    ),
    block(
      'current_time',
      'volatile',
      '[Now] (time unavailable)',
      async (ctx) => `[Now] ${await reader.formatTime(ctx)} ${shownInline(ctx.timeZone)}`,
    ),
  );
  return blocks;
}
