import { anthropicSystem, EngineError } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { SUBJECT_OPTION } from '../options.js';

const FORMATS = ['text', 'json', 'anthropic'] as const;

/** The context an agent arrives with on a surface, assembled before the first token. */
export const arrivalCommand = defineCommand({
  path: ['arrival'],
  summary: 'Assembles the context an agent arrives with on a surface, and records its manifest.',
  options: {
    surface: { kind: 'text', value: 'chat|wake', required: true, help: 'where the agent arrives' },
    session: { kind: 'text', value: 'S', help: 'the session it arrives in (one of the subject’s)' },
    ...SUBJECT_OPTION,
    format: {
      kind: 'choice',
      choices: FORMATS,
      help: 'default text (json with --json); anthropic: system parts with cache breakpoints',
    },
  },
  async run(ctx) {
    const { surface, session } = ctx.values;
    const format = ctx.values.format ?? (ctx.json ? 'json' : 'text');
    const arrival = await ctx.withSubject(ctx.values.subject, (me) =>
      me.arrival.assemble({ surface, ...(session === undefined ? {} : { sessionId: session }) }),
    );
    if (format === 'text') {
      ctx.print({ manifestId: arrival.manifestId, text: arrival.text }, () => arrival.text);
      return;
    }
    const doc =
      format === 'anthropic'
        ? {
            system: anthropicSystem(arrival.blocks),
            tools: arrival.tools,
            manifestId: arrival.manifestId,
          }
        : {
            blocks: arrival.blocks.map((b) => ({
              name: b.name,
              tier: b.tier,
              text: b.text,
              sha256: b.sha256,
              degraded: b.degraded,
            })),
            tools: arrival.tools,
            manifestId: arrival.manifestId,
          };
    ctx.io.stdout(JSON.stringify(doc) + '\n');
  },
});

/** `arrival diff`: an arrival against the previous one on its surface. */
export const arrivalDiffCommand = defineCommand({
  path: ['arrival', 'diff'],
  summary: 'Compares an arrival (by id, or the latest on a surface) with the one before it.',
  options: {
    surface: { kind: 'text', value: 'S', help: 'the latest arrival on this surface' },
    id: { kind: 'text', value: 'MANIFEST', help: 'this arrival (wins over --surface)' },
    ...SUBJECT_OPTION,
  },
  notes: ['Give --surface S or --id MANIFEST.'],
  async run(ctx) {
    const { id, surface } = ctx.values;
    if (id === undefined && surface === undefined) {
      throw new EngineError('INVALID_ARGUMENT', 'arrival diff needs --surface S or --id MANIFEST');
    }
    const diff = await ctx.withSubject(ctx.values.subject, (me) =>
      me.arrival.diff(id !== undefined ? { manifestId: id } : { surface: surface ?? '' }),
    );
    ctx.print(diff, () => {
      const parts = [
        ...diff.blocks.added.map((b) => `+ block ${b}`),
        ...diff.blocks.removed.map((b) => `- block ${b}`),
        ...diff.blocks.changed.map((b) => `~ block ${b}`),
        ...diff.tools.added.map((t) => `+ tool ${t}`),
        ...diff.tools.removed.map((t) => `- tool ${t}`),
      ];
      const head = `arrival ${diff.to} on ${diff.surface} vs ${diff.from ?? '(none before)'}`;
      return parts.length === 0 ? `${head}: no changes` : `${head}:\n${parts.join('\n')}`;
    });
  },
});
