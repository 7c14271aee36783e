import { stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const USAGE_OPTIONS = { session: { type: 'string' } } as const;

/** Utility requests (titles, insights) are counted here because they never enter history. */
export async function usageCommand(ctx: CommandContext): Promise<void> {
  const sessionId = stringValue(ctx.values, 'session');
  const usage = await ctx.withEngine(false, (engine) => engine.usage.bySession(sessionId));
  ctx.print(
    {
      sessionId,
      usage: usage.map((u) => ({
        kind: u.kind,
        requests: u.requests,
        chars: u.chars,
        firstAt: u.firstAt.toISOString(),
        lastAt: u.lastAt.toISOString(),
      })),
    },
    () =>
      usage.length === 0
        ? 'no utility requests'
        : usage.map((u) => `${u.kind}: ${u.requests} request(s), ${u.chars} chars`).join('\n'),
  );
}
