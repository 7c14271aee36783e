import { EngineError } from '../../src/domain/errors.js';
import { shownInline, shownJson } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { SUBJECT_OPTION } from '../options.js';

/** `session new`: starts a session of the subject. */
export const sessionNewCommand = defineCommand({
  path: ['session', 'new'],
  summary: 'Starts a session (a conversation) of the subject and prints its id.',
  options: {
    ...SUBJECT_OPTION,
    id: { kind: 'text', value: 'ID', help: 'the session id (default: a new one)' },
    title: { kind: 'text', value: 'T', help: 'a title' },
  },
  async run(ctx) {
    const { id, title } = ctx.values;
    if (id !== undefined && id.trim() === '') {
      throw new EngineError('INVALID_ARGUMENT', '--id is empty');
    }
    const session = await ctx.withSubject(ctx.values.subject, (me) =>
      me.sessions.create({
        ...(id === undefined ? {} : { id }),
        ...(title === undefined ? {} : { title }),
      }),
    );
    ctx.print({ sessionId: session.id, subject: session.subjectId }, () => session.id);
  },
});

/** `session list`: the subject's sessions, newest first. */
export const sessionListCommand = defineCommand({
  path: ['session', 'list'],
  summary: 'Lists the subject’s sessions, newest first.',
  options: {
    ...SUBJECT_OPTION,
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N sessions (default 100)' },
  },
  async run(ctx) {
    const { limit } = ctx.values;
    const sessions = await ctx.withSubject(ctx.values.subject, (me) =>
      me.sessions.list(limit === undefined ? {} : { limit }),
    );
    // titles (and ids) are stored strings: shown as a model is shown them
    ctx.print(
      shownJson({
        sessions: sessions.map((s) => ({
          sessionId: s.id,
          subject: s.subjectId,
          title: s.title,
          turns: s.turnCount,
          createdAt: s.createdAt.toISOString(),
        })),
      }),
      () =>
        sessions.length === 0
          ? 'no sessions'
          : sessions
              .map((s) =>
                `${shownInline(s.id)}  ${s.turnCount} turns  ${s.createdAt.toISOString()}  ${shownInline(s.title ?? '')}`.trimEnd(),
              )
              .join('\n'),
    );
  },
});
