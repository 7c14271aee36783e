import { EngineError } from '../../src/domain/errors.js';
import { SLOT_RULES, SUMMARY_SCOPES } from '../../src/domain/fact.js';
import { boundWords } from '../../src/domain/trust.js';
import type { SubjectHandle } from '../../src/index.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { SUBJECT_OPTION, type OptionSpecs } from '../options.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';
import { recordSignedHead } from '../head-file.js';

type KeyCtx = Parameters<typeof ownerSigner>[0] & CommandContext;

/** What a delegation lets a receipt-promoted fact say (signed with it). */
const BOUND_OPTIONS = {
  'max-chars': {
    kind: 'int',
    value: 'N',
    min: 1,
    help: 'the longest text a fact that goes live on a receipt may have (default 200)',
  },
  template: {
    kind: 'text',
    value: 'T',
    help: 'the words such a fact must have, {} where up to 80 characters of its own go (e.g. "Emailed {} to {}")',
  },
} as const satisfies OptionSpecs;

/** Signs a delegation (or its revocation) with the owner key, and records the new head. */
async function delegate(
  ctx: KeyCtx,
  me: SubjectHandle,
  name: string,
  tools: readonly string[] | undefined,
  autoLive: boolean,
  bound: { maxChars?: number | undefined; template?: string | undefined } = {},
) {
  const { signer, keyFile } = await ownerSigner(ctx, me);
  const result = await me.owner.delegate({
    slot: name,
    autoLive,
    signer,
    ...(tools === undefined ? {} : { tools }),
    ...(bound.maxChars === undefined ? {} : { maxChars: bound.maxChars }),
    ...(bound.template === undefined ? {} : { template: bound.template }),
  });
  recordSignedHead(ctx, keyFile, me, result);
  return result;
}

const slotLine = (s: {
  name: string;
  rule: string;
  autoLive: boolean;
  tools?: readonly string[];
  scope?: string;
}) =>
  `${s.name}: ${s.rule}${s.scope === undefined ? '' : ` (${s.scope})`}${s.autoLive ? ` (auto-live on ${(s.tools ?? []).join(', ')}, signed)` : ''}`;

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
    'auto-live': {
      kind: 'flag',
      help: 'also delegate it (signed with the owner key): did facts backed by a receipt of --tools go live',
    },
    tools: { kind: 'list', value: 'a,b', help: 'with --auto-live: the tools whose receipts count' },
    ...BOUND_OPTIONS,
    scope: {
      kind: 'choice',
      choices: SUMMARY_SCOPES,
      help: 'with --rule summary: rolling (one summary folded forward, the default) or session (one per session)',
    },
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
  },
  async run(ctx) {
    const { name, rule, tools, scope } = ctx.values;
    const autoLive = ctx.values['auto-live'] === true;
    if (tools !== undefined && !autoLive) {
      throw new EngineError('INVALID_ARGUMENT', '--tools goes with --auto-live', {
        data: { field: 'tools' },
      });
    }
    if (autoLive && rule !== 'action') {
      throw new EngineError('INVALID_ARGUMENT', 'only action slots can go live automatically', {
        data: { field: 'auto-live' },
      });
    }
    if (autoLive && tools === undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        '--auto-live needs --tools: the tools whose receipts count',
        {
          data: { field: 'tools' },
        },
      );
    }
    const slot = await ctx.withSubject(ctx.values.subject, async (me) => {
      const declared = await me.slots.declare({
        name,
        rule,
        ...(scope === undefined ? {} : { scope }),
      });
      if (!autoLive) return declared;
      const d = await delegate(ctx, me, name, tools, true, {
        maxChars: ctx.values['max-chars'],
        template: ctx.values.template,
      });
      return { ...declared, autoLive: d.autoLive, tools: d.tools };
    });
    ctx.print(slot, () => `slot ${slotLine(slot)}`);
  },
});

/** `slot delegate`: the owner signs which tools' receipts make an action slot's facts live. */
export const slotDelegateCommand = defineCommand({
  path: ['slot', 'delegate'],
  summary: 'Delegates an action slot (signed): did facts backed by a receipt of --tools go live.',
  options: {
    name: { kind: 'text', value: 'N', required: true, help: 'the action slot' },
    tools: { kind: 'list', value: 'a,b', help: 'the tools whose receipts count' },
    revoke: { kind: 'flag', help: 'revoke the delegation: its facts need a decision again' },
    ...BOUND_OPTIONS,
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
  },
  async run(ctx) {
    const { name, tools, revoke } = ctx.values;
    if (revoke === true && tools !== undefined) {
      throw new EngineError('INVALID_ARGUMENT', '--revoke takes no --tools', {
        data: { field: 'tools' },
      });
    }
    if (revoke !== true && tools === undefined) {
      throw new EngineError('INVALID_ARGUMENT', 'name the tools (--tools a,b) or --revoke', {
        data: { field: 'tools' },
      });
    }
    const result = await ctx.withSubject(ctx.values.subject, (me) =>
      delegate(ctx, me, name, tools, revoke !== true, {
        maxChars: ctx.values['max-chars'],
        template: ctx.values.template,
      }),
    );
    ctx.print(result, () =>
      result.autoLive
        ? `slot ${result.slot}: auto-live on ${result.tools.join(', ')}, ${boundWords(result.bound)} (link #${result.seq})`
        : `slot ${result.slot}: delegation revoked (link #${result.seq})`,
    );
  },
});

/** `slot list`: the subject's declared slots. */
export const slotListCommand = defineCommand({
  path: ['slot', 'list'],
  summary: 'Lists the subject’s declared slots and their rules.',
  options: SUBJECT_OPTION,
  async run(ctx) {
    const slots = await ctx.withSubject(ctx.values.subject, (me) => me.slots.list());
    ctx.print({ slots }, () => slots.map(slotLine).join('\n'));
  },
});
