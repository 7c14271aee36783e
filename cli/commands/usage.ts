import { defineCommand } from '../command.js';
import { SESSION_OPTION, SUBJECT_OPTION } from '../options.js';

/** Utility requests (titles, insights) are counted here because they never enter history. */
export const usageCommand = defineCommand({
  path: ['usage'],
  summary:
    'Counts the utility requests (titles, insights, reflections, summaries) of a session, never recorded as turns.',
  options: { ...SESSION_OPTION, ...SUBJECT_OPTION },
  async run(ctx) {
    const sessionId = ctx.values.session;
    const usage = await ctx.withSubject(ctx.values.subject, (me) => me.history.usage(sessionId));
    ctx.print(
      {
        sessionId,
        usage: usage.map((u) => ({
          kind: u.kind,
          requests: u.requests,
          chars: u.chars,
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          firstAt: u.firstAt.toISOString(),
          lastAt: u.lastAt.toISOString(),
        })),
      },
      () =>
        usage.length === 0
          ? 'no utility requests'
          : usage
              .map(
                (u) =>
                  `${u.kind}: ${u.requests} request(s), ${u.chars} chars${u.inputTokens + u.outputTokens > 0 ? `, ${u.inputTokens} tokens in, ${u.outputTokens} out` : ''}`,
              )
              .join('\n'),
    );
  },
});
