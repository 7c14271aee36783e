import { stat } from 'node:fs/promises';
import { EngineError } from '../../src/domain/errors.js';
import { shownText } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import type { CliIo } from '../io.js';
import { SUBJECT_OPTION } from '../options.js';

const FORMATS = ['text', 'json', 'anthropic'] as const;

/** The incoming message, from --message or --message-file (the engine checks its length). */
async function messageOption(
  text: string | undefined,
  file: string | undefined,
  io: CliIo,
): Promise<string | undefined> {
  if (file === undefined) return text;
  if (text !== undefined) {
    throw new EngineError('INVALID_ARGUMENT', 'give --message or --message-file, not both', {
      data: { field: 'message' },
    });
  }
  // a message is at most 20,000 UTF-16 units, at most 60,000 bytes of UTF-8: a bigger file is
  // refused before it is read
  const size = await stat(file).then(
    (s) => s.size,
    () => null,
  );
  if (size !== null && size > 60_000) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${file} holds ${size} bytes; a message is at most 20,000 characters`,
      { data: { field: 'message' } },
    );
  }
  try {
    return await io.readFile(file);
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', `cannot read ${file}: ${(err as Error).message}`, {
      data: { field: 'message' },
    });
  }
}

/** The context an agent arrives with on a surface, assembled before the first token. */
export const arrivalCommand = defineCommand({
  path: ['arrival'],
  summary: 'Assembles the context an agent arrives with on a surface, and records its manifest.',
  options: {
    surface: { kind: 'text', value: 'chat|wake', required: true, help: 'where the agent arrives' },
    session: { kind: 'text', value: 'S', help: 'the session it arrives in (one of the subject’s)' },
    message: {
      kind: 'text',
      value: 'TEXT',
      help: 'the incoming user message: the relevant block recalls memories for it (not recorded)',
    },
    'message-file': { kind: 'text', value: 'F', help: 'the incoming user message, from a file' },
    ...SUBJECT_OPTION,
    format: {
      kind: 'choice',
      choices: FORMATS,
      help: 'default text (json with --json); anthropic: system parts with cache breakpoints',
    },
  },
  notes: ['Give the incoming message with --message TEXT or --message-file F, not both.'],
  async run(ctx) {
    const { surface, session } = ctx.values;
    const format = ctx.values.format ?? (ctx.json ? 'json' : 'text');
    const message = await messageOption(ctx.values.message, ctx.values['message-file'], ctx.io);
    const arrival = await ctx.withSubject(ctx.values.subject, (me) =>
      me.arrival.assemble({
        surface,
        ...(session === undefined ? {} : { sessionId: session }),
        ...(message === undefined ? {} : { message }),
      }),
    );
    if (format === 'text') {
      ctx.print({ manifestId: arrival.manifestId, text: arrival.text }, () => arrival.text);
      return;
    }
    // the blocks are rendered; the tool names are stored strings, shown here
    const tools = arrival.tools.map((tool) => shownText(tool, 'lines'));
    const { anthropicSystem } = await import('../../src/index.js');
    const doc =
      format === 'anthropic'
        ? {
            system: anthropicSystem(arrival.blocks),
            tools,
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
            tools,
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
