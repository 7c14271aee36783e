import { EngineError } from '../../src/domain/errors.js';
import {
  countsLine,
  FORGET_REQUEST_STATUSES,
  planCounts,
  type ForgetPlan,
  type ForgetRequest,
  type ForgetScope,
  type TurnRange,
} from '../../src/domain/forget.js';
import { shownInline, shownJson } from '../../src/domain/shown-text.js';
import { ServerError } from '../../server/server-errors.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';
import { SUBJECT_OPTION } from '../options.js';
import type { SubjectHandle } from '../../src/index.js';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const rangeText = ([s, from, to]: TurnRange): string =>
  `session ${shownInline(s)}: ${from === to ? `turn ${from}` : `turns ${from}–${to}`}`;

/** What a plan removes, in lines for the owner to read before signing. */
export function planLines(plan: ForgetPlan): string[] {
  const t = plan.targets;
  const lines = [`forgetting this removes ${countsLine(planCounts(t))}:`];
  for (const r of t.turns.slice(0, 20)) lines.push(`  ${rangeText(r)}`);
  if (t.turns.length > 20) lines.push(`  … and ${t.turns.length - 20} more runs of turns`);
  if (t.facts.length > 0) lines.push(`  facts: ${t.facts.slice(0, 20).join(', ')}`);
  if (plan.liveFacts.length > 0) {
    lines.push('live facts that rest on it, which --with-facts forgets too:');
    for (const f of plan.liveFacts) {
      lines.push(`  ${shownInline(f.id)} (${shownInline(f.slot)}): ${shownInline(f.text)}`);
    }
  }
  return lines;
}

/** The scope the flags name: exactly one of them. */
function scopeOf(v: {
  turn?: string | undefined;
  session?: string | undefined;
  fact?: string | undefined;
  phrase?: string | undefined;
  everything?: boolean | undefined;
  request?: string | undefined;
  retention?: boolean | undefined;
}): ForgetScope | { request: string } | { retention: true } {
  const given = [
    v.retention === true,
    v.request !== undefined,
    v.turn !== undefined,
    v.session !== undefined,
    v.fact !== undefined,
    v.phrase !== undefined,
    v.everything === true,
  ].filter(Boolean).length;
  if (given !== 1) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'name one thing to forget: --turn SESSION:N, --session S, --fact ID, --phrase TEXT, --everything, --request ID or --retention',
      { data: { field: 'scope' } },
    );
  }
  if (v.retention === true) return { retention: true };
  if (v.request !== undefined) return { request: v.request };
  if (v.turn !== undefined) {
    const m = /^(.+):(\d+)$/.exec(v.turn);
    if (m === null) {
      throw new EngineError('INVALID_ARGUMENT', '--turn takes SESSION:N (e.g. s1:12)', {
        data: { field: 'turn' },
      });
    }
    return { kind: 'turn', session: m[1]!, seq: Number(m[2]) };
  }
  if (v.session !== undefined) return { kind: 'session', session: v.session };
  if (v.fact !== undefined) return { kind: 'fact', fact: v.fact };
  if (v.phrase !== undefined) return { kind: 'phrase', phrase: v.phrase };
  return { kind: 'subject' };
}

/** A pending request by id, or FORGET_REQUEST_NOT_FOUND / NOT_PENDING. */
async function requestOf(me: SubjectHandle, id: string): Promise<ForgetRequest> {
  const found = (await me.gate.forgetRequests({ status: 'pending', limit: 1000 })).find(
    (r) => r.id === id,
  );
  if (found !== undefined) return found;
  const any = (await me.gate.forgetRequests({ limit: 1000 })).find((r) => r.id === id);
  if (any === undefined) {
    throw new EngineError('FORGET_REQUEST_NOT_FOUND', `no forget request "${id}"`);
  }
  throw new EngineError('NOT_PENDING', `forget request "${id}" is ${any.status}`);
}

const requestLine = (r: ForgetRequest): string =>
  `${r.id} ${r.status.toUpperCase()} turn ${r.turn} of ${shownInline(r.sessionId)}: "${shownInline(r.quote)}" → ${r.scope.kind}${'phrase' in r.scope ? ` "${shownInline(String(r.scope.phrase))}"` : ''}`;

/** `forget requests`: the agents' forget requests, pending first by default. */
export const forgetRequestsCommand = defineCommand({
  path: ['forget', 'requests'],
  summary: "Lists agents' forget requests (the pending ones unless --status says otherwise).",
  options: {
    ...SUBJECT_OPTION,
    status: {
      kind: 'choice',
      choices: FORGET_REQUEST_STATUSES,
      help: 'only these (default pending)',
    },
  },
  async run(ctx) {
    const status = ctx.values.status ?? 'pending';
    const rows = await ctx.withSubject(ctx.values.subject, (me) =>
      me.gate.forgetRequests({ status }),
    );
    ctx.print(shownJson({ requests: rows }), () =>
      rows.length === 0 ? `no ${status} forget requests` : rows.map(requestLine).join('\n'),
    );
  },
});

/** `forget decline`: the owner declines a request; nothing is forgotten. */
export const forgetDeclineCommand = defineCommand({
  path: ['forget', 'decline'],
  summary: "Declines an agent's forget request: nothing is forgotten.",
  positionals: ['<id>'],
  options: SUBJECT_OPTION,
  async run(ctx) {
    const [id] = ctx.positionals;
    if (id === undefined)
      throw new EngineError('INVALID_ARGUMENT', 'usage: memledger forget decline <id>');
    const r = await ctx.withSubject(ctx.values.subject, (me) =>
      me.owner.declineForget({ request: id }),
    );
    ctx.print(
      shownJson({ request: r }),
      () => `declined forget request ${r.id}: nothing was forgotten`,
    );
  },
});

const FORGET_OPTIONS = {
  ...SUBJECT_OPTION,
  ...KEY_OPTIONS,
  turn: { kind: 'text', value: 'SESSION:N', help: 'one turn: its session and number' },
  session: { kind: 'text', value: 'S', help: 'every turn of a session, and its title' },
  fact: {
    kind: 'text',
    value: 'ID',
    help: 'a fact, with the facts it replaced or that replaced it',
  },
  phrase: {
    kind: 'text',
    value: 'TEXT',
    help: 'everything that holds the phrase (case and spacing ignored)',
  },
  everything: { kind: 'flag', help: "everything of the subject (the chain's links stay)" },
  request: { kind: 'text', value: 'ID', help: "what an agent's forget request names" },
  retention: {
    kind: 'flag',
    help: "apply the owner's signed retention rule (no passphrase: for a scheduler)",
  },
  'with-facts': { kind: 'flag', help: 'also forget the live facts that rest on it' },
  'dry-run': { kind: 'flag', help: 'show what would be removed; sign and change nothing' },
  yes: { kind: 'flag', help: 'forget what the listing shows (required to sign)' },
} as const;

/** `forget`: the owner forgets, signed; with --dry-run, only shows what would go. */
export const forgetCommand = defineCommand({
  path: ['forget'],
  summary:
    'Forgets a turn, a session, a fact, every trace of a phrase, or everything of a subject, signed with the owner key.',
  options: FORGET_OPTIONS,
  async run(ctx) {
    const v = ctx.values;
    const named = scopeOf(v);
    if ('retention' in named) return applyRetention(ctx, v);
    const out = await ctx.withSubject(v.subject, async (me) => {
      let scope: ForgetScope;
      let request: ForgetRequest | null = null;
      if ('request' in named) {
        request = await requestOf(me, named.request);
        scope = request.scope as ForgetScope;
        if (!ctx.json) {
          ctx.io.stderr(
            `honouring forget request ${shownInline(request.id)} (${shownInline(request.requestedBy)}), which quotes turn ${request.turn} of session ${shownInline(request.sessionId)}: "${shownInline(request.quote)}"\n`,
          );
        }
      } else {
        scope = named;
      }
      // shown before the passphrase is asked for: the owner signs what they read
      const plan = await me.owner.forgetPlan(scope);
      if (v['dry-run'] === true) return { dryRun: true as const, plan };
      if (!ctx.json) ctx.io.stderr(planLines(plan).join('\n') + '\n');
      if (v.yes !== true) {
        throw new ServerError(
          'CONFIRMATION_REQUIRED',
          `forgetting cannot be undone: it would remove ${countsLine(planCounts(plan.targets))}; run again with --yes to sign it (--dry-run lists it)`,
        );
      }
      const { signer, keyFile } = await ownerSigner(ctx, me);
      const result = await me.owner.forget({
        ...(request === null ? { scope } : { request: request.id }),
        signer,
        ...(v['with-facts'] === true ? { withFacts: true } : {}),
      });
      recordSignedHead(ctx, keyFile, me, result);
      return { dryRun: false as const, result };
    });
    if (out.dryRun) {
      ctx.print(shownJson({ dryRun: true, ...out.plan }), () => planLines(out.plan).join('\n'));
      return;
    }
    const r = out.result;
    ctx.print(
      {
        forgetId: r.forgetId,
        removed: r.removed,
        seq: r.seq,
        hash: r.hash,
        forgottenAt: r.forgottenAt.toISOString(),
        scrub: r.scrub,
      },
      () =>
        `forgot ${countsLine(r.removed)} (decision #${r.seq}, forget ${r.forgetId})` +
        (r.scrub.failed !== undefined
          ? `; removing its bytes from the store's files failed (${r.scrub.failed}): the next forget removes them`
          : r.scrub.walCleared
            ? '; no file of the store holds it now'
            : ''),
    );
  },
});

type ForgetCtx = CommandContext<typeof FORGET_OPTIONS>;

/**
 * `forget --retention`: the signed retention rule applied, with no passphrase (it signs nothing:
 * the rule was signed); --dry-run lists what it would take, --yes takes it. A run with nothing old
 * enough succeeds quietly, as a scheduler expects.
 */
async function applyRetention(ctx: ForgetCtx, v: ForgetCtx['values']): Promise<void> {
  const out = await ctx.withSubject(v.subject, async (me) => {
    const { plan, cutoff } = await me.owner.retentionPlan();
    if (v['dry-run'] === true) return { dryRun: true as const, plan, cutoff };
    if (v.yes !== true) {
      throw new ServerError(
        'CONFIRMATION_REQUIRED',
        `the retention rule would remove ${countsLine(planCounts(plan.targets))}; run again with --yes to apply it (--dry-run lists it)`,
      );
    }
    return { dryRun: false as const, cutoff, result: await me.owner.applyRetention() };
  });
  const before = `recorded before ${out.cutoff.toISOString().slice(0, 10)}`;
  if (out.dryRun) {
    ctx.print(shownJson({ dryRun: true, cutoff: out.cutoff.toISOString(), ...out.plan }), () =>
      [`the retention rule forgets what was ${before}:`, ...planLines(out.plan)].join('\n'),
    );
    return;
  }
  const r = out.result;
  ctx.print(
    r === null
      ? { forgetId: null, removed: {}, cutoff: out.cutoff.toISOString() }
      : {
          forgetId: r.forgetId,
          removed: r.removed,
          policySeq: r.policySeq,
          cutoff: out.cutoff.toISOString(),
          forgottenAt: r.forgottenAt.toISOString(),
          scrub: r.scrub,
        },
    () =>
      r === null
        ? `nothing ${before} is left to forget`
        : `forgot ${countsLine(r.removed)} ${before}, under the retention rule (policy link #${r.policySeq}, forget ${r.forgetId})`,
  );
}

/** `forget policy`: shows the subject's forget policy, or signs a new one. */
export const forgetPolicyCommand = defineCommand({
  path: ['forget', 'policy'],
  summary:
    "Shows the forget policy, or signs one: honour the user's quoted forget requests at once, keep turns N days.",
  options: {
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
    'honour-requests': {
      kind: 'choice',
      choices: ['on', 'off'] as const,
      help: "honour the user's own quoted forget requests at once (within their words)",
    },
    'retain-days': {
      kind: 'text',
      value: 'N|off',
      help: 'forget turns older than N days (except what a decided fact cites) when forget --retention runs',
    },
  },
  async run(ctx) {
    const v = ctx.values;
    const honour = v['honour-requests'];
    const days = v['retain-days'];
    let retainDays: number | null | undefined;
    if (days === 'off') retainDays = null;
    else if (days !== undefined) {
      if (!/^\d{1,6}$/.test(days)) {
        throw new EngineError('INVALID_ARGUMENT', '--retain-days takes a number of days, or off', {
          data: { field: 'retain-days' },
        });
      }
      retainDays = Number(days);
    }
    const out = await ctx.withSubject(v.subject, async (me) => {
      if (honour === undefined && retainDays === undefined) return await me.owner.forgetPolicy();
      const { signer, keyFile } = await ownerSigner(ctx, me);
      const signed = await me.owner.setForgetPolicy({
        ...(honour === undefined ? {} : { honourRequests: honour === 'on' }),
        ...(retainDays === undefined ? {} : { retainDays }),
        signer,
      });
      recordSignedHead(ctx, keyFile, me, signed);
      return { ...(await me.owner.forgetPolicy()), policy: signed.policy, seq: signed.seq };
    });
    const p = out.policy;
    const by = { request: "at the user's request", retention: 'by the retention rule' };
    ctx.print(shownJson(out), () =>
      [
        out.seq === null ? 'no forget policy is signed:' : `forget policy (decision #${out.seq}):`,
        `  the user's quoted forget requests: ${p.honourRequests ? 'honoured at once, within their words' : 'wait for the owner'}`,
        `  retention: ${p.retainDays === null ? 'turns are kept' : `turns older than ${plural(p.retainDays, 'day')} are forgotten by forget --retention`}`,
        ...(out.recent.length === 0 ? [] : ['the last forgets under a policy:']),
        ...out.recent.map(
          (r) =>
            `  ${r.forgottenAt.toISOString().slice(0, 10)} ${countsLine(r.removed)} ${by[r.basis]} (policy #${r.policySeq}, forget ${r.id})`,
        ),
      ].join('\n'),
    );
  },
});
