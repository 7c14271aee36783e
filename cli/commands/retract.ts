import { EngineError, type Retraction } from '../../src/index.js';
import { flag, intValue, listValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';

export const RETRACT_OPTIONS = {
  subject: { type: 'string' },
  claim: { type: 'string' },
  'stood-on': { type: 'string' },
  'why-wrong': { type: 'string' },
  corrected: { type: 'string' },
  procedure: { type: 'string' },
  'pass-obs': { type: 'string' },
  'overturn-if': { type: 'string' },
  fact: { type: 'string' },
  'probe-file': { type: 'string' },
  'caught-by': { type: 'string' },
  'claimed-at': { type: 'string' },
  'corrected-at': { type: 'string' },
  surface: { type: 'string' },
  ref: { type: 'string' },
  tags: { type: 'string' },
  'due-days': { type: 'string' },
} as const;
export const RETRACT_LIST_OPTIONS = {
  subject: { type: 'string' },
  verdict: { type: 'string' },
} as const;
export const RETRACT_DUE_OPTIONS = { subject: { type: 'string' } } as const;
export const RETRACT_SETTLE_OPTIONS = {
  ...PROBE_CONFIG_OPTIONS,
  'run-probe': { type: 'boolean' },
  verdict: { type: 'string' },
  outcome: { type: 'string' },
  by: { type: 'string' },
} as const;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function retractionToJson(r: Retraction): Record<string, unknown> {
  return {
    id: r.id,
    subject: r.subjectId,
    claim: r.claim,
    claimedAt: iso(r.claimedAt),
    claimSurface: r.claimSurface,
    claimRef: r.claimRef,
    stoodOn: r.stoodOn,
    whyWrong: r.whyWrong,
    corrected: r.correctedClaim,
    correctedAt: r.correctedAt.toISOString(),
    caughtBy: r.caughtBy,
    tags: r.tags,
    falsifier: {
      procedure: r.procedure,
      passObservation: r.passObservation,
      overturnCondition: r.overturnCondition,
    },
    probe: r.probe,
    dueAt: r.dueAt.toISOString(),
    factId: r.factId,
    verdict: r.verdict,
    settlement:
      r.settledAt === null
        ? null
        : {
            at: r.settledAt.toISOString(),
            outcome: r.settledOutcome,
            by: r.settledBy,
            probeRecordId: r.settledProbeRecordId,
            restoredFactId: r.restoredFactId,
          },
  };
}

function line(r: Retraction): string {
  const settled =
    r.verdict === 'unchecked'
      ? `due ${r.dueAt.toISOString().slice(0, 10)}`
      : `settled by ${r.settledBy ?? '?'}`;
  return `[${r.id}] ${r.verdict.toUpperCase()} (${settled}) "${r.claim}" → "${r.correctedClaim}"`;
}

function dateValue(ctx: CommandContext, name: string): Date | undefined {
  const v = stringValue(ctx.values, name);
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new EngineError('INVALID_ARGUMENT', `--${name} is not a date: "${v}"`);
  return d;
}

async function readProbeFile(ctx: CommandContext, path: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await ctx.io.readFile(path));
  } catch (err) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `cannot read probe file ${path}: ${(err as Error).message}`,
    );
  }
  const o = parsed as { probe?: unknown; standsIf?: unknown; overturnsIf?: unknown } | null;
  if (
    o === null ||
    typeof o !== 'object' ||
    typeof o.standsIf !== 'string' ||
    typeof o.overturnsIf !== 'string'
  ) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${path} must be {"probe": {…spec…}, "standsIf": "<verdict>", "overturnsIf": "<verdict>"}`,
    );
  }
  return { spec: o.probe, standsIf: o.standsIf, overturnsIf: o.overturnsIf };
}

export async function retractCommand(ctx: CommandContext): Promise<void> {
  const v = (name: string) => stringValue(ctx.values, name);
  const probeFile = v('probe-file');
  const probe = probeFile === undefined ? undefined : await readProbeFile(ctx, probeFile);
  const optional = <K extends string, T>(key: K, value: T | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, T>>;
  const dueDays = intValue(ctx.values, 'due-days', 0);
  const r = await ctx.withEngine(false, (engine) =>
    engine.ledger.retract({
      claim: v('claim') ?? '',
      stoodOn: v('stood-on') ?? '',
      whyWrong: v('why-wrong') ?? '',
      corrected: v('corrected') ?? '',
      procedure: v('procedure') ?? '',
      passObservation: v('pass-obs') ?? '',
      overturnCondition: v('overturn-if') ?? '',
      ...optional('subject', v('subject')),
      ...optional('factId', v('fact')),
      ...optional('caughtBy', v('caught-by')),
      ...optional('claimedAt', dateValue(ctx, 'claimed-at')),
      ...optional('correctedAt', dateValue(ctx, 'corrected-at')),
      ...optional('claimSurface', v('surface')),
      ...optional('claimRef', v('ref')),
      ...optional('tags', listValue(ctx.values, 'tags')),
      ...optional('dueDays', dueDays),
      ...optional('probe', probe),
    }),
  );
  ctx.print(retractionToJson(r), () => `retracted: ${line(r)}`);
}

export async function retractListCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const verdict = stringValue(ctx.values, 'verdict');
  const rows = await ctx.withEngine(false, (engine) =>
    engine.ledger.list({
      ...(subject === undefined ? {} : { subject }),
      ...(verdict === undefined ? {} : { verdict }),
    }),
  );
  ctx.print({ retractions: rows.map(retractionToJson) }, () =>
    rows.length === 0 ? 'no retractions' : rows.map(line).join('\n'),
  );
}

export async function retractDueCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const rows = await ctx.withEngine(false, (engine) =>
    engine.ledger.due(subject === undefined ? {} : { subject }),
  );
  ctx.print({ due: rows.map(retractionToJson) }, () =>
    rows.length === 0 ? 'no falsifier is due' : rows.map(line).join('\n'),
  );
}

export async function retractSettleCommand(ctx: CommandContext): Promise<void> {
  const [id] = ctx.positionals;
  if (id === undefined)
    throw new EngineError(
      'INVALID_ARGUMENT',
      'usage: memledger retract settle <id> (--run-probe | --verdict V --outcome TEXT)',
    );
  const runProbe = flag(ctx.values, 'run-probe');
  const verdict = stringValue(ctx.values, 'verdict');
  const outcome = stringValue(ctx.values, 'outcome');
  const by = stringValue(ctx.values, 'by');
  if (runProbe === (verdict !== undefined)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'settle with exactly one of --run-probe or --verdict stands|overturned|unresolvable',
    );
  }
  if (verdict !== undefined && outcome === undefined) {
    throw new EngineError('INVALID_ARGUMENT', '--verdict needs --outcome: what was observed');
  }
  const r = await ctx.withEngine(
    false,
    (engine) =>
      engine.ledger.settle(
        runProbe
          ? { id, runProbe: true, ...(by === undefined ? {} : { by }) }
          : {
              id,
              verdict: verdict ?? '',
              outcome: outcome ?? '',
              ...(by === undefined ? {} : { by }),
            },
      ),
    // the probe runs inside the roots and hosts this command is given, like `memledger probe`
    { probes: probeConfig(ctx) },
  );
  ctx.print(
    retractionToJson(r),
    () =>
      `settled: ${line(r)}${r.restoredFactId === null ? '' : `; restored fact ${r.restoredFactId}`}`,
  );
}
