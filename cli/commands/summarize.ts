import type { Summary } from '../../src/index.js';
import { renderCitations } from '../../src/domain/fact-render.js';
import { shownInline } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { LLM_OPTIONS, llmFrom } from '../llm-options.js';
import { SUBJECT_OPTION } from '../options.js';

function summaryJson(s: Summary) {
  return { ...s, createdAt: s.createdAt.toISOString() };
}

function summaryLines(s: Summary): string[] {
  const head =
    `summary ${s.id} of ${s.aspect} (${s.promptVersion}, ${s.provider} ${s.model}) on session ${s.sessionId}: ` +
    `${s.sentences.filter((x) => x.verdict === 'supported' || x.verdict === 'kept').length} of ${s.sentences.length} sentences supported; ` +
    `kept ${s.changes.kept}, added ${s.changes.added}, left out of the previous version ${s.changes.leftOut}` +
    `${s.previousId === null ? '' : ` (folds ${s.previousId})`}; ${s.usage.inputTokens} tokens in, ${s.usage.outputTokens} out`;
  return [
    head,
    ...s.sentences.map((x) => {
      const from = renderCitations(x.citations);
      return x.verdict === 'supported' || x.verdict === 'kept'
        ? `${x.verdict.toUpperCase()} ${shownInline(x.text)}${from === '' ? '' : `  (from ${from})`}`
        : `LEFT OUT ${x.verdict} ${shownInline(x.text)}\n  ${shownInline(x.reason)}`;
    }),
    s.factId === null
      ? 'no sentence was supported: nothing was stored'
      : `PROPOSED [${s.factId}] ${s.aspect}: in the pile (${s.factStatus ?? 'proposed'}) until the owner decides`,
  ];
}

/**
 * `summarize --aspect A [--session S]`: a living summary of one aspect. The model sees the
 * session's numbered turns and the aspect's previous version; every sentence cites turns and is
 * checked against them; what they support goes to the pile as one `summarized` fact.
 */
export const summarizeCommand = defineCommand({
  path: ['summarize'],
  summary:
    'Writes a summary aspect: a model writes sentences citing turns, each is checked, the pile waits.',
  options: {
    aspect: { kind: 'text', value: 'A', required: true, help: 'a slot declared --rule summary' },
    session: {
      kind: 'text',
      value: 'S',
      help: 'the session whose turns are summarized (default: the newest)',
    },
    ...SUBJECT_OPTION,
    ...LLM_OPTIONS,
  },
  notes: [
    'declare an aspect first: slot declare --name A --rule summary [--scope rolling|session]',
    'the model: --llm-url and --llm-model, or MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL; its key only in MEMLEDGER_LLM_API_KEY',
  ],
  async run(ctx) {
    const { aspect, session } = ctx.values;
    const llm = llmFrom(ctx);
    const s = await ctx.withSubject(
      ctx.values.subject,
      (me) =>
        me.summaries.summarize({
          aspect,
          ...(session === undefined ? {} : { sessionId: session }),
        }),
      llm === undefined ? {} : { llm },
    );
    ctx.print(summaryJson(s), () => summaryLines(s).join('\n'));
  },
});

/** `summarize list`: past summaries, newest first, each sentence with its verdict. */
export const summarizeListCommand = defineCommand({
  path: ['summarize', 'list'],
  summary: 'Lists summaries, newest first, with every sentence’s verdict and what changed.',
  options: {
    ...SUBJECT_OPTION,
    aspect: { kind: 'text', value: 'A', help: 'only this aspect’s summaries' },
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N summaries (default 20)' },
  },
  async run(ctx) {
    const { aspect, limit } = ctx.values;
    const list = await ctx.withSubject(ctx.values.subject, (me) =>
      me.summaries.list({
        ...(aspect === undefined ? {} : { aspect }),
        ...(limit === undefined ? {} : { limit }),
      }),
    );
    ctx.print({ summaries: list.map(summaryJson) }, () =>
      list.length === 0 ? 'no summaries yet' : list.flatMap(summaryLines).join('\n'),
    );
  },
});
