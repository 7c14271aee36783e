import { EngineError } from '../../src/index.js';
import { flag, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const SLOT_DECLARE_OPTIONS = {
  subject: { type: 'string' },
  name: { type: 'string' },
  rule: { type: 'string' },
  'auto-live': { type: 'boolean' },
} as const;
export const SLOT_LIST_OPTIONS = { subject: { type: 'string' } } as const;

export async function slotDeclareCommand(ctx: CommandContext): Promise<void> {
  const name = stringValue(ctx.values, 'name');
  const rule = stringValue(ctx.values, 'rule');
  if (name === undefined || rule === undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'slot declare needs --name and --rule user_fact|correction|action',
    );
  }
  const subject = stringValue(ctx.values, 'subject');
  const slot = await ctx.withEngine(false, (engine) =>
    engine.slots.declare({
      name,
      rule,
      autoLive: flag(ctx.values, 'auto-live'),
      ...(subject === undefined ? {} : { subject }),
    }),
  );
  ctx.print(slot, () => `slot ${slot.name}: ${slot.rule}${slot.autoLive ? ' (auto-live)' : ''}`);
}

export async function slotListCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const slots = await ctx.withEngine(false, (engine) =>
    engine.slots.list(subject === undefined ? {} : { subject }),
  );
  ctx.print({ slots }, () =>
    slots.map((s) => `${s.name}: ${s.rule}${s.autoLive ? ' (auto-live)' : ''}`).join('\n'),
  );
}
