import { EngineError, historyMessages, renderHistory, type Turn } from '../../src/index.js';
import { intValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const HISTORY_OPTIONS = {
  session: { type: 'string' },
  format: { type: 'string' },
  last: { type: 'string' },
  budget: { type: 'string' },
  'max-turn-chars': { type: 'string' },
} as const;

const FORMATS = ['text', 'json', 'messages'] as const;
type Format = (typeof FORMATS)[number];

export function turnToJson(t: Turn): Record<string, unknown> {
  return {
    turnId: t.id,
    seq: t.seq,
    role: t.role,
    content: t.content,
    corrective: t.corrective,
    receipt: t.receipt,
    recordedAt: t.recordedAt.toISOString(),
  };
}

export async function historyCommand(ctx: CommandContext): Promise<void> {
  const rawFormat = stringValue(ctx.values, 'format');
  const format = (rawFormat ?? (ctx.json ? 'json' : 'text')) as Format;
  if (!FORMATS.includes(format)) {
    throw new EngineError('INVALID_ARGUMENT', `--format must be one of ${FORMATS.join(', ')}`);
  }
  const last = intValue(ctx.values, 'last', 1);
  const budget = intValue(ctx.values, 'budget', 1);
  const maxTurnChars = intValue(ctx.values, 'max-turn-chars', 1);
  if (format !== 'text' && (budget !== undefined || maxTurnChars !== undefined)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--budget and --max-turn-chars apply to --format text',
    );
  }
  const sessionId = stringValue(ctx.values, 'session');
  const turns = await ctx.withEngine(false, (engine) =>
    engine.history.turns(sessionId, last === undefined ? {} : { last }),
  );
  const id = turns[0]?.sessionId ?? sessionId;
  if (format === 'json') {
    const doc = { sessionId: id, turns: turns.map(turnToJson) };
    ctx.io.stdout(JSON.stringify(doc) + '\n');
    return;
  }
  if (format === 'messages') {
    const doc = { sessionId: id, messages: historyMessages(turns) };
    ctx.io.stdout(JSON.stringify(doc) + '\n');
    return;
  }
  const text = renderHistory(turns, {
    ...(budget === undefined ? {} : { budgetChars: budget }),
    ...(maxTurnChars === undefined ? {} : { maxTurnChars }),
  });
  ctx.print({ sessionId: id, text }, () => (text === '' ? '(no turns yet)' : text));
}
