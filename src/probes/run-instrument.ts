import { PROBE_VERDICTS, type ProbeOutcome, type ProbeSpec } from '../domain/probe.js';
import {
  errorOutcome,
  type ProbeContext,
  type ProbeInstrument,
  type RecordedOutcome,
} from './instruments.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Runs an instrument and holds it to its contract: a throw or a malformed answer becomes an
 * `error` verdict (INSTRUMENT_FAILED) instead of a verdict nobody checked.
 */
export async function runInstrument(
  instrument: ProbeInstrument,
  spec: ProbeSpec,
  ctx: ProbeContext,
): Promise<RecordedOutcome> {
  let outcome: unknown;
  try {
    outcome = await instrument.run(spec, ctx);
  } catch (err) {
    return errorOutcome(
      'INSTRUMENT_FAILED',
      `instrument "${instrument.name}" threw: ${String(err)}`,
    );
  }
  if (!isRecord(outcome) || !(PROBE_VERDICTS as readonly unknown[]).includes(outcome.verdict)) {
    return errorOutcome(
      'INSTRUMENT_FAILED',
      `instrument "${instrument.name}" gave no known verdict`,
    );
  }
  const verdict = outcome.verdict as ProbeOutcome['verdict'];
  const evidence = isRecord(outcome.evidence) ? outcome.evidence : {};
  const code = outcome.errorCode;
  if (verdict === 'error') {
    const errorCode = typeof code === 'string' && code !== '' ? code : 'INSTRUMENT_FAILED';
    return { verdict, errorCode, evidence };
  }
  if (code !== null && code !== undefined) {
    return errorOutcome(
      'INSTRUMENT_FAILED',
      `instrument "${instrument.name}" answered ${verdict} with error code ${String(code)}`,
      evidence,
    );
  }
  return { verdict, errorCode: null, evidence };
}
