import { EngineError } from '../../src/index.js';
import { intValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const SESSION_NEW_OPTIONS = {
  subject: { type: 'string' },
  id: { type: 'string' },
  title: { type: 'string' },
} as const;

export const SESSION_LIST_OPTIONS = {
  subject: { type: 'string' },
  limit: { type: 'string' },
} as const;

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

export async function sessionNewCommand(ctx: CommandContext): Promise<void> {
  const id = stringValue(ctx.values, 'id');
  if (id !== undefined && id.trim() === '')
    throw new EngineError('INVALID_ARGUMENT', '--id is empty');
  await ctx.withEngine(false, async (engine) => {
    const session = await engine.sessions.create({
      ...optional('subject', stringValue(ctx.values, 'subject')),
      ...optional('id', id),
      ...optional('title', stringValue(ctx.values, 'title')),
    });
    ctx.print({ sessionId: session.id, subject: session.subjectId }, () => session.id);
  });
}

export async function sessionListCommand(ctx: CommandContext): Promise<void> {
  const limit = intValue(ctx.values, 'limit', 1);
  await ctx.withEngine(false, async (engine) => {
    const sessions = await engine.sessions.list({
      ...optional('subject', stringValue(ctx.values, 'subject')),
      ...(limit === undefined ? {} : { limit }),
    });
    ctx.print(
      {
        sessions: sessions.map((s) => ({
          sessionId: s.id,
          subject: s.subjectId,
          title: s.title,
          turns: s.turnCount,
          createdAt: s.createdAt.toISOString(),
        })),
      },
      () =>
        sessions.length === 0
          ? 'no sessions'
          : sessions
              .map((s) =>
                `${s.id}  ${s.turnCount} turns  ${s.createdAt.toISOString()}  ${s.title ?? ''}`.trimEnd(),
              )
              .join('\n'),
    );
  });
}
