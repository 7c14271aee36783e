import { verdictLine } from '../fact-json.js';
import type {
  LlmClient,
  ReflectionOutcome,
  ReflectionResult,
  ReflectionRun,
} from '../../src/index.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { LLM_OPTIONS, llmFrom } from '../llm-options.js';
import { SESSION_OPTION, SUBJECT_OPTION } from '../options.js';
import { REHEARSAL_BANNER, REHEARSE_OPTION, withRehearsalModel } from '../rehearsal.js';

function runJson(r: ReflectionRun) {
  return { ...r, createdAt: r.createdAt.toISOString() };
}

/**
 * `reflect --session S`: memledger's own reflection. The model sees the session's numbered
 * turns with receipts, the declared slots and the live facts; every proposal of its answer goes
 * through the gate unchanged. Nothing it proposes is live: the pile waits for the owner.
 */
export const reflectCommand = defineCommand({
  path: ['reflect'],
  summary:
    'Runs memledger’s reflection on a session: a model proposes, the gate checks, the pile waits.',
  options: {
    ...SESSION_OPTION,
    ...SUBJECT_OPTION,
    from: { kind: 'int', value: 'N', min: 1, help: 'only turns from seq N on' },
    to: { kind: 'int', value: 'N', min: 1, help: 'only turns up to seq N' },
    ...LLM_OPTIONS,
    ...REHEARSE_OPTION,
  },
  notes: [
    'the model: --llm-url and --llm-model, or MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL; its key only in MEMLEDGER_LLM_API_KEY',
    '--rehearse: the scripted fake model instead (no --llm-* flag), and nothing is stored: no pile, no dropped log, no run, no usage',
  ],
  async run(ctx) {
    const { session: sessionId, from, to } = ctx.values;
    const rehearse = ctx.values.rehearse === true;
    const reflect = (llm: LlmClient | undefined) =>
      ctx.withSubject(
        ctx.values.subject,
        (me) =>
          me.reflection.reflect({
            sessionId,
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
            ...(rehearse ? { rehearse } : {}),
          }),
        llm === undefined ? {} : { llm },
      );
    const result = rehearse ? await withRehearsalModel(ctx, reflect) : await reflect(llmFrom(ctx));
    const r = result.reflection;
    if (rehearse) {
      printRehearsal(ctx, result);
      return;
    }
    ctx.print({ reflection: runJson(r), proposed: result.proposed, dropped: result.dropped }, () =>
      [
        `reflection ${r.id} (${r.promptVersion}, ${r.provider} ${r.model}) on turns #${r.turns.from}-#${r.turns.to}: ` +
          `${r.proposed} proposed, ${r.dropped} dropped, ${r.proposed - r.dropped} to the pile; ${r.usage.inputTokens} tokens in, ${r.usage.outputTokens} out`,
        ...result.dropped.map((d) => `DROPPED ${d.code} ${d.slot}: ${d.text}\n  ${d.reason}`),
        ...result.proposed.map((p) => `PROPOSED [${p.id}] ${p.slot}: ${p.text}${verdictLine(p)}`),
        r.proposed === 0 ? 'the model proposed nothing (a recorded outcome)' : '',
      ]
        .filter((l) => l !== '')
        .join('\n'),
    );
  },
});

/**
 * A rehearsal's verdicts, labelled as such: what the gate would have dropped (with its code) and
 * what would have reached the pile. No ids: the rows they name were rolled back.
 */
function printRehearsal(ctx: CommandContext, result: ReflectionResult): void {
  const r = result.reflection;
  const wouldReach = result.proposed.map((p) => ({
    slot: p.slot,
    text: p.text,
    attested: p.attested,
    attestation: p.attestation,
  }));
  ctx.print(
    {
      rehearsal: true,
      stored: false,
      reflection: {
        sessionId: r.sessionId,
        promptVersion: r.promptVersion,
        provider: r.provider,
        model: r.model,
        turns: r.turns,
        proposed: r.proposed,
        dropped: r.dropped,
        usage: r.usage,
      },
      proposed: wouldReach,
      dropped: result.dropped,
    },
    () =>
      [
        REHEARSAL_BANNER,
        `reflection rehearsal (${r.promptVersion}, ${r.provider} ${r.model}) on turns #${r.turns.from}-#${r.turns.to}: ` +
          `${r.proposed} proposed, ${r.dropped} would be dropped, ${r.proposed - r.dropped} would reach the pile`,
        ...result.dropped.map(
          (d) => `WOULD BE DROPPED ${d.code} ${d.slot}: ${d.text}\n  ${d.reason}`,
        ),
        ...wouldReach.map((p) => `WOULD REACH THE PILE ${p.slot}: ${p.text}${verdictLine(p)}`),
        r.proposed === 0 ? 'the model proposed nothing' : '',
        'nothing was stored: the pile, the dropped log, the runs and the usage are as they were',
      ]
        .filter((l) => l !== '')
        .join('\n'),
  );
}

function outcomeLine(o: ReflectionOutcome): string {
  const drops = Object.entries(o.dropped)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  return `${o.promptVersion} ${o.slot}: proposed ${o.proposed}, dropped ${o.proposed - o.reachedPile}${drops === '' ? '' : ` (${drops})`}, reached the pile ${o.reachedPile} (unattested ${o.unattested}); now pending ${o.pending}, live ${o.live}, rejected ${o.rejected}, other ${o.other}`;
}

/** `reflect list`: past runs, and per prompt version and slot what their proposals became. */
export const reflectListCommand = defineCommand({
  path: ['reflect', 'list'],
  summary: 'Lists reflection runs and, per prompt version and slot, what their proposals became.',
  options: {
    ...SUBJECT_OPTION,
    session: { kind: 'text', value: 'S', help: 'only this session’s runs' },
    version: { kind: 'text', value: 'V', help: 'only this prompt version’s outcomes' },
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N runs (default 20)' },
  },
  async run(ctx) {
    const { session, version, limit } = ctx.values;
    const { runs, outcomes } = await ctx.withSubject(ctx.values.subject, async (me) => ({
      runs: await me.reflection.list({
        ...(session === undefined ? {} : { sessionId: session }),
        ...(limit === undefined ? {} : { limit }),
      }),
      outcomes: await me.reflection.outcomes(
        version === undefined ? {} : { promptVersion: version },
      ),
    }));
    ctx.print({ runs: runs.map(runJson), outcomes }, () =>
      [
        runs.length === 0
          ? 'no reflections yet'
          : runs
              .map(
                (r) =>
                  `${r.createdAt.toISOString()} ${r.id} session ${r.sessionId} (${r.promptVersion}, ${r.model}): ${r.proposed} proposed, ${r.dropped} dropped`,
              )
              .join('\n'),
        ...outcomes.map(outcomeLine),
      ].join('\n'),
    );
  },
});
