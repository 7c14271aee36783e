import { createHash } from 'node:crypto';
import { EngineError } from '../domain/errors.js';
import { controlsDiverge, type ProbeSpec, type ProbeVerdict } from '../domain/probe.js';
import { parseProbeSpec } from '../domain/probe-spec.js';
import {
  errorOutcome,
  type ProbeContext,
  type ProbeControls,
  type ProbeInstrument,
  type RecordedOutcome,
} from './instruments.js';
import { runInstrument } from './run-instrument.js';

export interface CalibrationResult {
  instrument: string;
  kind: ProbeInstrument['kind'];
  fingerprint: string;
  /** True only when the positive control was `verified` and the negative `falsified`. */
  passed: boolean;
  positive: ProbeVerdict;
  negative: ProbeVerdict;
  detail: {
    positive: { spec: ProbeSpec | null; outcome: RecordedOutcome };
    negative: { spec: ProbeSpec | null; outcome: RecordedOutcome };
    /** Why the controls could not be set up or removed, if they could not. */
    problem?: string;
  };
}

/** The implementation a calibration vouches for; derived from the code when not declared. */
export function instrumentFingerprint(instrument: ProbeInstrument): string {
  if (instrument.fingerprint !== undefined) return instrument.fingerprint;
  const code = `${instrument.kind}\n${String(instrument.run)}\n${String(instrument.controls)}`;
  return `code:sha256:${createHash('sha256').update(code).digest('hex')}`;
}

/**
 * Dual-needle calibration (seed 000 §6.2): the instrument answers a control pair against a target
 * the engine made itself, a needle known present and one known absent. An instrument that cannot
 * tell them apart (a yes-man, or one that never looks) fails.
 */
export async function calibrate(
  instrument: ProbeInstrument,
  ctx: ProbeContext,
): Promise<CalibrationResult> {
  const base = {
    instrument: instrument.name,
    kind: instrument.kind,
    fingerprint: instrumentFingerprint(instrument),
  };
  const failed = (problem: string): CalibrationResult => {
    const outcome = errorOutcome('INSTRUMENT_FAILED', problem);
    return {
      ...base,
      passed: false,
      positive: 'error',
      negative: 'error',
      detail: { positive: { spec: null, outcome }, negative: { spec: null, outcome }, problem },
    };
  };
  let controls: ProbeControls;
  try {
    controls = await instrument.controls(ctx);
  } catch (err) {
    return failed(`the controls could not be set up: ${String(err)}`);
  }
  try {
    for (const spec of [controls.positive, controls.negative]) {
      if (parseProbeSpec(spec).kind !== instrument.kind) {
        throw new EngineError('INVALID_ARGUMENT', `a ${spec.kind} control`);
      }
    }
  } catch (err) {
    await controls.cleanup?.().catch(() => undefined);
    return failed(
      `the instrument's controls are not valid ${instrument.kind} probes: ${String(err)}`,
    );
  }
  let positive: RecordedOutcome;
  let negative: RecordedOutcome;
  let problem: string | undefined;
  try {
    positive = await runInstrument(instrument, controls.positive, ctx);
    negative = await runInstrument(instrument, controls.negative, ctx);
  } finally {
    try {
      await controls.cleanup?.();
    } catch (err) {
      problem = `the control target could not be removed: ${String(err)}`;
    }
  }
  return {
    ...base,
    passed: controlsDiverge(positive.verdict, negative.verdict),
    positive: positive.verdict,
    negative: negative.verdict,
    detail: {
      positive: { spec: controls.positive, outcome: positive },
      negative: { spec: controls.negative, outcome: negative },
      ...(problem === undefined ? {} : { problem }),
    },
  };
}
