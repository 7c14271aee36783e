import { EngineError } from '../../src/domain/errors.js';
import { renderReceiptLine } from '../../src/domain/receipt.js';
import { shownInline, shownJson } from '../../src/domain/shown-text.js';
import { parseChoice } from '../../src/domain/vocabulary.js';
import type { RecallItem } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { EMBEDDER_OPTIONS, embedderFrom, VECTOR_WEIGHT_OPTION } from '../embedder-options.js';
import { SUBJECT_OPTION } from '../options.js';

function line(item: RecallItem, rank: number): string {
  const p = item.passport;
  const where =
    item.kind === 'turn'
      ? `${shownInline(p.sessionId ?? '?')}#${p.turn ?? '?'} ${shownInline(p.role ?? '')}${p.speaker ? ` (${shownInline(p.speaker)})` : ''}`
      : `${shownInline(p.slot ?? '')}${p.key ? `/${shownInline(p.key)}` : ''} ${p.origin} ${p.status}${p.sessionId ? `, evidence ${shownInline(p.sessionId)}#${p.turn ?? '?'}` : ''}`;
  const text = item.text.length > 300 ? `${item.text.slice(0, 299)}…` : item.text;
  const receipt = p.receipt ? `\n    ${renderReceiptLine(p.receipt)}` : '';
  return `${String(rank).padStart(2)}. [${item.kind}] ${p.date.slice(0, 10)} ${where}\n    ${shownInline(text).replace(/\s+/g, ' ')}${receipt}`;
}

/** `recall "query"`: ranked turns and facts, each with its passport. Reads only. */
export const recallCommand = defineCommand({
  path: ['recall'],
  summary: 'Recalls the turns and facts that best match a query, each with its passport.',
  positionals: ['"query"'],
  options: {
    k: { kind: 'int', value: '10', min: 1, help: 'how many items (at most 200)' },
    session: { kind: 'text', value: 'S', help: 'only this session’s turns, and facts cited in it' },
    'include-history': { kind: 'flag', help: 'also facts that are not live, labelled' },
    kinds: { kind: 'list', value: 'turn,fact', help: 'which kinds of memory (default both)' },
    ...SUBJECT_OPTION,
    lexical: { kind: 'flag', help: 'rank by words only, even with an embedder' },
    ...VECTOR_WEIGHT_OPTION,
    ...EMBEDDER_OPTIONS,
  },
  async run(ctx) {
    const query = ctx.positionals[0];
    if (query === undefined || query.trim() === '') {
      throw new EngineError('EMPTY_TEXT', 'a query is required: memledger recall "query"');
    }
    const { k, session, lexical } = ctx.values;
    const { RECALL_KINDS } = await import('../../src/index.js');
    const kinds = ctx.values.kinds?.map((kind) => parseChoice(RECALL_KINDS, kind, '--kinds'));
    const vectorWeight = ctx.values['vector-weight'];
    const embedder = lexical ? undefined : await embedderFrom(ctx);
    const items = await ctx.withSubject(
      ctx.values.subject,
      (me) =>
        me.recall.search(query, {
          ...(k === undefined ? {} : { k }),
          ...(session === undefined ? {} : { session }),
          ...(kinds === undefined ? {} : { kinds }),
          includeHistory: ctx.values['include-history'],
          ...(vectorWeight === undefined ? {} : { params: { vectorWeight } }),
        }),
      embedder === undefined ? {} : { embedder },
    );
    ctx.print({ query, items: shownJson(items) }, () =>
      items.length === 0 ? '(nothing recalled)' : items.map((it, i) => line(it, i + 1)).join('\n'),
    );
  },
});

/** `memledger embed`: stores vectors for the turns and facts that have none for the model yet. */
export const embedCommand = defineCommand({
  path: ['embed'],
  summary: 'Stores vectors for the subject’s turns and facts that have none for the model yet.',
  options: {
    ...SUBJECT_OPTION,
    limit: { kind: 'int', value: '1000', min: 1, help: 'at most this many turns and facts' },
    ...EMBEDDER_OPTIONS,
  },
  async run(ctx) {
    const embedder = await embedderFrom(ctx);
    if (embedder === undefined) {
      throw new EngineError(
        'NO_EMBEDDER',
        'no embedder: give --embedder-url and --embedder-model, or --embedder-path ' +
          '(or MEMLEDGER_EMBEDDER_URL / _MODEL / _PATH)',
      );
    }
    const { limit } = ctx.values;
    const result = await ctx.withSubject(
      ctx.values.subject,
      (me) => me.vectors.embedPending(limit === undefined ? {} : { limit }),
      { embedder },
    );
    ctx.print(
      result,
      () =>
        `embedded ${result.turns} turn(s) and ${result.facts} fact(s) with ${result.model}; ` +
        (result.remaining ? 'more remain: run `memledger embed` again' : 'nothing left to embed'),
    );
  },
});
