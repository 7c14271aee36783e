import { anthropicSystem, EngineError } from '../../src/index.js';
import { stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const ARRIVAL_OPTIONS = {
  session: { type: 'string' },
  subject: { type: 'string' },
  surface: { type: 'string' },
  format: { type: 'string' },
} as const;
export const ARRIVAL_DIFF_OPTIONS = {
  subject: { type: 'string' },
  surface: { type: 'string' },
  id: { type: 'string' },
} as const;

const FORMATS = ['text', 'json', 'anthropic'] as const;

/** The context an agent arrives with on a surface, assembled before the first token. */
export async function arrivalCommand(ctx: CommandContext): Promise<void> {
  const surface = stringValue(ctx.values, 'surface');
  if (surface === undefined)
    throw new EngineError('INVALID_ARGUMENT', '--surface is required (e.g. chat or wake)');
  const format = stringValue(ctx.values, 'format') ?? (ctx.json ? 'json' : 'text');
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new EngineError('INVALID_ARGUMENT', `--format must be one of ${FORMATS.join(', ')}`);
  }
  const sessionId = stringValue(ctx.values, 'session');
  const subject = stringValue(ctx.values, 'subject');
  const arrival = await ctx.withEngine(false, (engine) =>
    engine.arrival.assemble({
      surface,
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(subject === undefined ? {} : { subject }),
    }),
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
}

export async function arrivalDiffCommand(ctx: CommandContext): Promise<void> {
  const id = stringValue(ctx.values, 'id');
  const surface = stringValue(ctx.values, 'surface');
  const subject = stringValue(ctx.values, 'subject');
  const diff = await ctx.withEngine(false, (engine) =>
    engine.arrival.diff({
      ...(id === undefined ? {} : { manifestId: id }),
      ...(surface === undefined ? {} : { surface }),
      ...(subject === undefined ? {} : { subject }),
    }),
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
}
