import { EngineError } from '../../src/domain/errors.js';
import { shownJson } from '../../src/domain/shown-text.js';
import type { Turn } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { SESSION_OPTION, SUBJECT_OPTION } from '../options.js';

const FORMATS = ['text', 'json', 'messages'] as const;

/**
 * A turn as `history --format json` prints it: its strings shown as a model is shown stored text
 * (`shownJson`), as history's other formats show them.
 */
export function turnToJson(t: Turn): Record<string, unknown> {
  return shownJson({
    turnId: t.id,
    seq: t.seq,
    role: t.role,
    content: t.content,
    corrective: t.corrective,
    receipt: t.receipt,
    recordedAt: t.recordedAt.toISOString(),
  }) as Record<string, unknown>;
}

/** `history`: one session's turns, as text with receipts, as rows, or as chat messages. */
export const historyCommand = defineCommand({
  path: ['history'],
  summary: 'Prints a session’s history: text with each receipt, JSON rows, or chat messages.',
  options: {
    ...SESSION_OPTION,
    ...SUBJECT_OPTION,
    format: { kind: 'choice', choices: FORMATS, help: 'default text (json with --json)' },
    last: { kind: 'int', value: 'N', min: 1, help: 'only the last N turns' },
    budget: { kind: 'int', value: 'CHARS', min: 1, help: 'text: at most CHARS characters' },
    'max-turn-chars': { kind: 'int', value: 'N', min: 1, help: 'text: cut each turn at N' },
  },
  async run(ctx) {
    const { session: sessionId, last, budget } = ctx.values;
    const format = ctx.values.format ?? (ctx.json ? 'json' : 'text');
    const maxTurnChars = ctx.values['max-turn-chars'];
    if (format !== 'text' && (budget !== undefined || maxTurnChars !== undefined)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        '--budget and --max-turn-chars apply to --format text',
      );
    }
    const window = last === undefined ? {} : { last };
    await ctx.withSubject(ctx.values.subject, async (me) => {
      if (format === 'json') {
        const turns = await me.history.turns(sessionId, window);
        ctx.io.stdout(JSON.stringify({ sessionId, turns: turns.map(turnToJson) }) + '\n');
        return;
      }
      if (format === 'messages') {
        const messages = await me.history.messages(sessionId, window);
        ctx.io.stdout(JSON.stringify({ sessionId, messages }) + '\n');
        return;
      }
      const text = await me.history.render(sessionId, {
        ...window,
        ...(budget === undefined ? {} : { budgetChars: budget }),
        ...(maxTurnChars === undefined ? {} : { maxTurnChars }),
      });
      ctx.print({ sessionId, text }, () => (text === '' ? '(no turns yet)' : text));
    });
  },
});
