import type { LlmClient, Summary } from '../../src/index.js';
import { renderCitations } from '../../src/domain/fact-render.js';
import { shownInline } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { LLM_OPTIONS, llmFrom } from '../llm-options.js';
import { SUBJECT_OPTION } from '../options.js';
import { REHEARSAL_BANNER, REHEARSE_OPTION, withRehearsalModel } from '../rehearsal.js';

function summaryJson(s: Summary) {
  return { ...s, createdAt: s.createdAt.toISOString() };
}

/** A summary's lines; a rehearsal's without ids (its rows were rolled back). */
function summaryLines(s: Summary, rehearsal = false): string[] {
  const head =
    `${rehearsal ? 'summary rehearsal' : `summary ${s.id}`} of ${s.aspect} (${s.promptVersion}, ${s.provider} ${s.model}) on session ${s.sessionId}: ` +
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
    rehearsal
      ? s.factId === null
        ? 'no sentence was supported: nothing would have been stored'
        : `WOULD REACH THE PILE ${s.aspect}: the supported sentences, as one summarized fact`
      : s.factId === null
        ? 'no sentence was supported: nothing was stored'
        : `PROPOSED [${s.factId}] ${s.aspect}: in the pile (${s.factStatus ?? 'proposed'}) until the owner decides`,
  ];
}

/** A rehearsal's summary as JSON: labelled, without the ids of rows that were rolled back. */
function rehearsalJson(s: Summary) {
  return {
    rehearsal: true,
    stored: false,
    aspect: s.aspect,
    sessionId: s.sessionId,
    previousId: s.previousId,
    wouldReachPile: s.factId !== null,
    text: s.text,
    sentences: s.sentences,
    changes: s.changes,
    promptVersion: s.promptVersion,
    provider: s.provider,
    model: s.model,
    usage: s.usage,
  };
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
    ...REHEARSE_OPTION,
  },
  notes: [
    'every subject starts with the rolling aspect life_lately; declare others first: memledger slot declare --name A --rule summary [--scope rolling|session]',
    'the model: --llm-url and --llm-model, or MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL; its key only in MEMLEDGER_LLM_API_KEY',
    '--rehearse: the scripted fake model instead (no --llm-* flag), and nothing is stored: no fact in the pile, no summary, no usage',
  ],
  async run(ctx) {
    const { aspect, session } = ctx.values;
    const rehearse = ctx.values.rehearse === true;
    const summarize = (llm: LlmClient | undefined) =>
      ctx.withSubject(
        ctx.values.subject,
        (me) =>
          me.summaries.summarize({
            aspect,
            ...(session === undefined ? {} : { sessionId: session }),
            ...(rehearse ? { rehearse } : {}),
          }),
        llm === undefined ? {} : { llm },
      );
    if (rehearse) {
      const s = await withRehearsalModel(ctx, summarize);
      ctx.print(rehearsalJson(s), () =>
        [
          REHEARSAL_BANNER,
          ...summaryLines(s, true),
          'nothing was stored: the pile, the summaries and the usage are as they were',
        ].join('\n'),
      );
      return;
    }
    const s = await summarize(llmFrom(ctx));
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
      list.length === 0 ? 'no summaries yet' : list.flatMap((s) => summaryLines(s)).join('\n'),
    );
  },
});
