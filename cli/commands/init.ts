import { stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const INIT_OPTIONS = { subject: { type: 'string' } } as const;

export async function initCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  await ctx.withEngine(true, async (engine) => {
    const result = await engine.init(subject === undefined ? {} : { subject });
    ctx.print(
      // The owner's signing key arrives with the write gate; until then there is none.
      {
        db: engine.location,
        engine: engine.kind,
        subject: result.subject,
        created: result.created,
        ownerKey: null,
      },
      () =>
        `${result.created ? 'Initialized' : 'Already initialized'}: subject "${result.subject}" in ${engine.location} (${engine.kind})`,
    );
  });
}
