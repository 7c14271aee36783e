import { EngineError } from '../../src/domain/errors.js';
import {
  COMPARE_OPS,
  PROBE_KINDS,
  type FileProbeSpec,
  type ProbeSpec,
} from '../../src/domain/probe.js';
import type { ProbeRecord } from '../../src/index.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { SUBJECT_OPTION, type OptionSpecs } from '../options.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';

/** A falsified probe (or a failed calibration) is a failed check: the exit code says so. */
export const EXIT_FALSIFIED = 3;
/** A probe that could not look (verdict `error`) is a failed check too. */
export const EXIT_PROBE_ERROR = 4;

const RUN_OPTIONS = {
  ...SUBJECT_OPTION,
  purpose: { kind: 'text', value: 'T', help: 'why the probe runs (kept in the probe log)' },
  ...PROBE_CONFIG_OPTIONS,
} as const satisfies OptionSpecs;

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

async function runProbe(ctx: CommandContext<typeof RUN_OPTIONS>, spec: ProbeSpec): Promise<void> {
  const { purpose } = ctx.values;
  const record = await ctx.withSubject(
    ctx.values.subject,
    (me) => me.probes.run(spec, purpose === undefined ? {} : { purpose }),
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

/** `probe file`: does a file exist, or hold a needle, inside the allowed roots. */
export const probeFileCommand = defineCommand({
  path: ['probe', 'file'],
  summary: 'Probes a file inside the allowed roots: it exists, is missing, or contains a needle.',
  options: {
    path: { kind: 'text', value: 'P', required: true, help: 'the file, relative to a root' },
    exists: { kind: 'flag', help: 'verified when the file exists' },
    missing: { kind: 'flag', help: 'verified_missing when it does not' },
    contains: { kind: 'text', value: 'X', help: 'verified when the file contains X' },
    negate: { kind: 'flag', help: 'with --contains: verified_missing when X is absent' },
    ...RUN_OPTIONS,
  },
  notes: ['Give exactly one of --exists, --missing, --contains X.'],
  async run(ctx) {
    const { path, exists, missing, contains, negate } = ctx.values;
    const modes = [
      exists ? 'exists' : null,
      missing ? 'missing' : null,
      contains === undefined ? null : 'contains',
    ].filter((m) => m !== null);
    if (modes.length !== 1) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'give exactly one of --exists, --missing, --contains X',
      );
    }
    if (negate && contains === undefined) {
      throw new EngineError('INVALID_ARGUMENT', '--negate goes with --contains only');
    }
    const spec: FileProbeSpec =
      contains === undefined
        ? { kind: 'file', path, mode: exists ? 'exists' : 'missing' }
        : { kind: 'file', path, mode: 'contains', needle: contains, negate };
    await runProbe(ctx, spec);
  },
});

/** `probe sql`: one read-only query's number, compared with an expected value. */
export const probeSqlCommand = defineCommand({
  path: ['probe', 'sql'],
  summary: 'Probes the store with one read-only query whose single number is compared.',
  options: {
    query: { kind: 'text', value: 'Q', required: true, help: 'one SELECT returning one number' },
    op: { kind: 'choice', choices: COMPARE_OPS, required: true, help: 'the comparison' },
    expect: { kind: 'text', value: 'V', required: true, help: 'the number to compare with' },
    ...RUN_OPTIONS,
  },
  notes: ['A negative --expect is written --expect=-1.'],
  async run(ctx) {
    const { query, op, expect } = ctx.values;
    if (!/^-?\d+(\.\d+)?$/.test(expect.trim())) {
      throw new EngineError('INVALID_ARGUMENT', `--expect must be a number, not "${expect}"`);
    }
    await runProbe(ctx, { kind: 'sql', query, op, expect: Number(expect) });
  },
});

/** `probe http`: a GET on loopback or an allowed host, by status and/or body needle. */
export const probeHttpCommand = defineCommand({
  path: ['probe', 'http'],
  summary:
    'Probes a URL on loopback or an allowed host: its status, a needle in its body, or both.',
  options: {
    url: { kind: 'text', value: 'U', required: true, help: 'the URL to GET' },
    status: { kind: 'int', value: 'N', min: 100, help: 'the expected status' },
    contains: { kind: 'text', value: 'X', help: 'a needle the body must contain' },
    ...RUN_OPTIONS,
  },
  async run(ctx) {
    const { url, status, contains } = ctx.values;
    await runProbe(ctx, {
      kind: 'http',
      url,
      ...(status === undefined ? {} : { status }),
      ...(contains === undefined ? {} : { contains }),
    });
  },
});

/** `probe calibrate`: each instrument's positive and negative controls. */
export const probeCalibrateCommand = defineCommand({
  path: ['probe', 'calibrate'],
  summary: 'Runs each instrument’s positive and negative controls; exits 3 on a FAIL.',
  options: {
    instrument: { kind: 'text', value: 'NAME', help: 'only this instrument' },
    ...SUBJECT_OPTION,
    ...PROBE_CONFIG_OPTIONS,
  },
  async run(ctx) {
    const { instrument } = ctx.values;
    const results = await ctx.withSubject(
      ctx.values.subject,
      (me) => me.probes.calibrate(instrument === undefined ? {} : { instrument }),
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
  },
});

/** `probe log`: the subject's probe records, newest first. */
export const probeLogCommand = defineCommand({
  path: ['probe', 'log'],
  summary: 'Lists the probe records, newest first.',
  options: {
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N (default 50)' },
    kind: { kind: 'choice', choices: PROBE_KINDS, help: 'only probes of this kind' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { limit, kind } = ctx.values;
    const records = await ctx.withSubject(ctx.values.subject, (me) =>
      me.probes.log({
        ...(limit === undefined ? {} : { limit }),
        ...(kind === undefined ? {} : { kind }),
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
  },
});

/** `probe calibrations`: the recorded calibrations, newest first. */
export const probeCalibrationsCommand = defineCommand({
  path: ['probe', 'calibrations'],
  summary: 'Lists the recorded calibrations, newest first.',
  options: {
    instrument: { kind: 'text', value: 'NAME', help: 'only this instrument' },
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { limit, instrument } = ctx.values;
    const rows = await ctx.withSubject(ctx.values.subject, (me) =>
      me.probes.calibrations({
        ...(limit === undefined ? {} : { limit }),
        ...(instrument === undefined ? {} : { instrument }),
      }),
    );
    ctx.print(
      {
        calibrations: rows.map((c) => ({
          ...c,
          calibrationId: c.id,
          ranAt: c.ranAt.toISOString(),
        })),
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
  },
});
