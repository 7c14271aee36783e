import { SLOT_RULES } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { SUBJECT_OPTION } from '../options.js';

/** `slot declare`: a kind of memory and the rule a proposal for it must meet. */
export const slotDeclareCommand = defineCommand({
  path: ['slot', 'declare'],
  summary: 'Declares a slot (a kind of memory) and the rule its proposals must meet.',
  options: {
    name: { kind: 'text', value: 'N', required: true, help: 'the slot name (a-z, 0-9, _)' },
    rule: {
      kind: 'choice',
      choices: SLOT_RULES,
      required: true,
      invalid: 'UNKNOWN_SLOT_RULE',
      help: 'what a proposal must cite',
    },
    'auto-live': { kind: 'flag', help: 'an action slot whose receipt-backed facts go live' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { name, rule } = ctx.values;
    const autoLive = ctx.values['auto-live'];
    const slot = await ctx.withSubject(ctx.values.subject, (me) =>
      me.slots.declare({ name, rule, autoLive }),
    );
    ctx.print(slot, () => `slot ${slot.name}: ${slot.rule}${slot.autoLive ? ' (auto-live)' : ''}`);
  },
});

/** `slot list`: the subject's declared slots. */
export const slotListCommand = defineCommand({
  path: ['slot', 'list'],
  summary: 'Lists the subject’s declared slots and their rules.',
  options: SUBJECT_OPTION,
  async run(ctx) {
    const slots = await ctx.withSubject(ctx.values.subject, (me) => me.slots.list());
    ctx.print({ slots }, () =>
      slots.map((s) => `${s.name}: ${s.rule}${s.autoLive ? ' (auto-live)' : ''}`).join('\n'),
    );
  },
});
