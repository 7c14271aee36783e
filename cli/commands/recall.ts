import {
  EngineError,
  renderReceiptLine,
  type RecallItem,
  type RecallKind,
} from '../../src/index.js';
import { flag, intValue, listValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { EMBEDDER_OPTIONS, embedderFrom, vectorWeightFrom } from '../embedder-options.js';

export const RECALL_OPTIONS = {
  k: { type: 'string' },
  session: { type: 'string' },
  subject: { type: 'string' },
  kinds: { type: 'string' },
  'include-history': { type: 'boolean' },
  lexical: { type: 'boolean' },
  'vector-weight': { type: 'string' },
  ...EMBEDDER_OPTIONS,
} as const;

export const EMBED_OPTIONS = {
  subject: { type: 'string' },
  limit: { type: 'string' },
  ...EMBEDDER_OPTIONS,
} as const;

function line(item: RecallItem, rank: number): string {
  const p = item.passport;
  const where =
    item.kind === 'turn'
      ? `${p.sessionId ?? '?'}#${p.turn ?? '?'} ${p.role ?? ''}${p.speaker ? ` (${p.speaker})` : ''}`
      : `${p.slot ?? ''}${p.key ? `/${p.key}` : ''} ${p.origin} ${p.status}${p.sessionId ? `, evidence ${p.sessionId}#${p.turn ?? '?'}` : ''}`;
  const text = item.text.length > 300 ? `${item.text.slice(0, 299)}…` : item.text;
  const receipt = p.receipt ? `\n    ${renderReceiptLine(p.receipt)}` : '';
  return `${String(rank).padStart(2)}. [${item.kind}] ${p.date.slice(0, 10)} ${where}\n    ${text.replace(/\s+/g, ' ')}${receipt}`;
}

export async function recallCommand(ctx: CommandContext): Promise<void> {
  const query = ctx.positionals[0];
  if (query === undefined || query.trim() === '') {
    throw new EngineError('EMPTY_TEXT', 'a query is required: memledger recall "query"');
  }
  const k = intValue(ctx.values, 'k', 1);
  const session = stringValue(ctx.values, 'session');
  const subject = stringValue(ctx.values, 'subject');
  const kinds = listValue(ctx.values, 'kinds') as RecallKind[] | undefined;
  const lexical = flag(ctx.values, 'lexical');
  const vectorWeight = vectorWeightFrom(ctx);
  const embedder = lexical ? undefined : await embedderFrom(ctx);
  const items = await ctx.withEngine(
    false,
    (engine) =>
      engine.recall(query, {
        ...(k === undefined ? {} : { k }),
        ...(session === undefined ? {} : { session }),
        ...(subject === undefined ? {} : { subject }),
        ...(kinds === undefined ? {} : { kinds }),
        includeHistory: flag(ctx.values, 'include-history'),
        ...(vectorWeight === undefined ? {} : { params: { vectorWeight } }),
      }),
    embedder === undefined ? {} : { embedder },
  );
  ctx.print({ query, items }, () =>
    items.length === 0 ? '(nothing recalled)' : items.map((it, i) => line(it, i + 1)).join('\n'),
  );
}

/** `memledger embed`: stores vectors for the turns and facts that have none for the model yet. */
export async function embedCommand(ctx: CommandContext): Promise<void> {
  const embedder = await embedderFrom(ctx);
  if (embedder === undefined) {
    throw new EngineError(
      'NO_EMBEDDER',
      'no embedder: give --embedder-url and --embedder-model, or --embedder-path ' +
        '(or MEMLEDGER_EMBEDDER_URL / _MODEL / _PATH)',
    );
  }
  const subject = stringValue(ctx.values, 'subject');
  const limit = intValue(ctx.values, 'limit', 1);
  const result = await ctx.withEngine(
    false,
    (engine) =>
      engine.embedPending({
        ...(subject === undefined ? {} : { subject }),
        ...(limit === undefined ? {} : { limit }),
      }),
    { embedder },
  );
  ctx.print(
    result,
    () =>
      `embedded ${result.turns} turn(s) and ${result.facts} fact(s) with ${result.model}; ` +
      (result.remaining ? 'more remain: run `memledger embed` again' : 'nothing left to embed'),
  );
}
