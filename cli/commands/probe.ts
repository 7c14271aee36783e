import { EngineError, type ProbeKind, type ProbeRecord } from '../../src/index.js';
import { flag, intValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';

const RUN_OPTIONS = {
  ...PROBE_CONFIG_OPTIONS,
  subject: { type: 'string' },
  purpose: { type: 'string' },
} as const;
export const PROBE_FILE_OPTIONS = {
  ...RUN_OPTIONS,
  path: { type: 'string' },
  exists: { type: 'boolean' },
  missing: { type: 'boolean' },
  contains: { type: 'string' },
  negate: { type: 'boolean' },
} as const;
export const PROBE_SQL_OPTIONS = {
  ...RUN_OPTIONS,
  query: { type: 'string' },
  op: { type: 'string' },
  expect: { type: 'string' },
} as const;
export const PROBE_HTTP_OPTIONS = {
  ...RUN_OPTIONS,
  url: { type: 'string' },
  status: { type: 'string' },
  contains: { type: 'string' },
} as const;
export const PROBE_CALIBRATE_OPTIONS = {
  ...PROBE_CONFIG_OPTIONS,
  instrument: { type: 'string' },
} as const;
export const PROBE_LOG_OPTIONS = { limit: { type: 'string' }, kind: { type: 'string' } } as const;
export const PROBE_CALIBRATIONS_OPTIONS = {
  limit: { type: 'string' },
  instrument: { type: 'string' },
} as const;

/** A falsified probe and a probe that could not look are failed checks: the exit code says so. */
export const EXIT_FALSIFIED = 3;
export const EXIT_PROBE_ERROR = 4;

function required(ctx: CommandContext, name: string): string {
  const v = stringValue(ctx.values, name);
  if (v === undefined) throw new EngineError('INVALID_ARGUMENT', `--${name} is required`);
  return v;
}

function recordJson(r: ProbeRecord): Record<string, unknown> {
  return {
    verdict: r.verdict,
    ...(r.errorCode === null ? {} : { errorCode: r.errorCode }),
    evidence: r.evidence,
    calibrated: r.calibrated,
    recordId: r.id,
  };
}

function recordLine(r: ProbeRecord): string {
  const code = r.errorCode === null ? '' : ` (${r.errorCode})`;
  const what = Object.entries(r.evidence)
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' ');
  const trust = r.calibrated ? 'calibrated' : 'NOT CALIBRATED';
  return `${r.verdict}${code} [${r.instrument}, ${trust}] ${what}  record ${r.id}`;
}

async function runProbe(ctx: CommandContext, spec: Record<string, unknown>): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const purpose = stringValue(ctx.values, 'purpose');
  const record = await ctx.withEngine(
    false,
    (engine) =>
      engine.probes.run(engine.probes.parseSpec(spec), {
        ...(subject === undefined ? {} : { subject }),
        ...(purpose === undefined ? {} : { purpose }),
      }),
    { probes: probeConfig(ctx) },
  );
  ctx.print(recordJson(record), () =>
    [
      recordLine(record),
      ...(record.calibrated
        ? []
        : ['the instrument has not passed calibration; run `memledger probe calibrate`']),
    ].join('\n'),
  );
  if (record.verdict === 'falsified') ctx.setExitCode(EXIT_FALSIFIED);
  if (record.verdict === 'error') ctx.setExitCode(EXIT_PROBE_ERROR);
}

export async function probeFileCommand(ctx: CommandContext): Promise<void> {
  const path = required(ctx, 'path');
  const contains = stringValue(ctx.values, 'contains');
  const modes = [
    flag(ctx.values, 'exists') ? 'exists' : null,
    flag(ctx.values, 'missing') ? 'missing' : null,
    contains === undefined ? null : 'contains',
  ].filter((m) => m !== null);
  if (modes.length !== 1) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'give exactly one of --exists, --missing, --contains X',
    );
  }
  if (flag(ctx.values, 'negate') && contains === undefined) {
    throw new EngineError('INVALID_ARGUMENT', '--negate goes with --contains only');
  }
  await runProbe(ctx, {
    kind: 'file',
    path,
    mode: modes[0],
    ...(contains === undefined ? {} : { needle: contains, negate: flag(ctx.values, 'negate') }),
  });
}

export async function probeSqlCommand(ctx: CommandContext): Promise<void> {
  const raw = required(ctx, 'expect');
  if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) {
    throw new EngineError('INVALID_ARGUMENT', `--expect must be a number, not "${raw}"`);
  }
  await runProbe(ctx, {
    kind: 'sql',
    query: required(ctx, 'query'),
    op: required(ctx, 'op'),
    expect: Number(raw),
  });
}

export async function probeHttpCommand(ctx: CommandContext): Promise<void> {
  const status = intValue(ctx.values, 'status', 100);
  const contains = stringValue(ctx.values, 'contains');
  await runProbe(ctx, {
    kind: 'http',
    url: required(ctx, 'url'),
    ...(status === undefined ? {} : { status }),
    ...(contains === undefined ? {} : { contains }),
  });
}

export async function probeCalibrateCommand(ctx: CommandContext): Promise<void> {
  const instrument = stringValue(ctx.values, 'instrument');
  const results = await ctx.withEngine(
    false,
    (engine) => engine.probes.calibrate(instrument === undefined ? {} : { instrument }),
    { probes: probeConfig(ctx) },
  );
  const passed = results.every((r) => r.passed);
  ctx.print({ passed, calibrations: results }, () =>
    results
      .map(
        (r) =>
          `${r.passed ? 'PASS' : 'FAIL'} ${r.instrument}: positive control ${r.positive}, negative control ${r.negative}${r.problem === undefined ? '' : ` (${r.problem})`}`,
      )
      .join('\n'),
  );
  if (!passed) ctx.setExitCode(EXIT_FALSIFIED);
}

export async function probeLogCommand(ctx: CommandContext): Promise<void> {
  const limit = intValue(ctx.values, 'limit', 1);
  const kind = stringValue(ctx.values, 'kind');
  const records = await ctx.withEngine(false, (engine) =>
    engine.probes.log({
      ...(limit === undefined ? {} : { limit }),
      ...(kind === undefined ? {} : { kind: kind as ProbeKind }),
    }),
  );
  ctx.print(
    {
      records: records.map((r) => ({
        ...recordJson(r),
        errorCode: r.errorCode,
        instrument: r.instrument,
        spec: r.spec,
        subject: r.subject,
        purpose: r.purpose,
        calibrationId: r.calibrationId,
        ranAt: r.ranAt.toISOString(),
      })),
    },
    () =>
      records.length === 0
        ? 'no probe records'
        : records.map((r) => `${r.ranAt.toISOString()} ${recordLine(r)}`).join('\n'),
  );
}

export async function probeCalibrationsCommand(ctx: CommandContext): Promise<void> {
  const limit = intValue(ctx.values, 'limit', 1);
  const instrument = stringValue(ctx.values, 'instrument');
  const rows = await ctx.withEngine(false, (engine) =>
    engine.probes.calibrations({
      ...(limit === undefined ? {} : { limit }),
      ...(instrument === undefined ? {} : { instrument }),
    }),
  );
  ctx.print(
    {
      calibrations: rows.map((c) => ({ ...c, calibrationId: c.id, ranAt: c.ranAt.toISOString() })),
    },
    () =>
      rows.length === 0
        ? 'no calibrations; run `memledger probe calibrate`'
        : rows
            .map(
              (c) =>
                `${c.ranAt.toISOString()} ${c.passed ? 'PASS' : 'FAIL'} ${c.instrument} (${c.kind}): positive ${c.positive}, negative ${c.negative}  [${c.fingerprint}]`,
            )
            .join('\n'),
  );
}
