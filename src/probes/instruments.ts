import type { ProbeKind, ProbeOutcome, ProbeSpec } from '../domain/probe.js';
import type { ReadOnlySql } from '../store/read-only-sql.js';

/** `src/<p>.ts` → `dist/<p>.js` (seed 000), used only when configured and the source is absent. */
export interface SourceFallback {
  from: string;
  to: string;
  fromExt: string;
  toExt: string;
}

/** What every instrument may use; built from the engine's `ProbeConfig`. */
export interface ProbeContext {
  /** Absolute allowed roots for file probes; the first also holds the file controls. */
  roots: readonly string[];
  sourceFallback: SourceFallback | null;
  /** Hostnames an http probe may reach besides loopback. Lower case. */
  httpAllowlist: readonly string[];
  httpTimeoutMs: number;
  sqlTimeoutMs: number;
  /** The store, read-only: one statement per call, in a transaction that is rolled back. */
  sql: ReadOnlySql;
}

/** A control pair against a target the engine made itself, and how to remove that target. */
export interface ProbeControls {
  /** A needle known to be present: a sound instrument answers `verified`. */
  positive: ProbeSpec;
  /** A needle known to be absent: a sound instrument answers `falsified`. */
  negative: ProbeSpec;
  cleanup?: () => Promise<void>;
}

/**
 * A verification instrument. Its verdicts count only after its own controls diverged (see
 * calibration.ts). `run` reports expected failures as an `error` verdict, not by throwing.
 */
export interface ProbeInstrument {
  name: string;
  kind: ProbeKind;
  /**
   * Identifies this implementation in calibration records, so a replacement that shares a name
   * never inherits another implementation's passing calibration. Derived from the code if absent.
   */
  fingerprint?: string;
  run(spec: ProbeSpec, ctx: ProbeContext): Promise<ProbeOutcome>;
  controls(ctx: ProbeContext): Promise<ProbeControls>;
}

/** An outcome as recorded: `errorCode` stated, null unless the verdict is `error`. */
export interface RecordedOutcome extends ProbeOutcome {
  errorCode: string | null;
}

export function errorOutcome(
  errorCode: string,
  message: string,
  evidence: Record<string, unknown> = {},
): RecordedOutcome {
  return { verdict: 'error', errorCode, evidence: { ...evidence, message } };
}
