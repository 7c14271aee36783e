import type { ProbeKind, ProbeSpec, ProbeVerdict } from './probe.js';

/** One probe run as recorded in the probe log (append-only). */
export interface ProbeRecord {
  id: string;
  /** The subject the run was made for; null for a run made for no subject. */
  subject: string | null;
  instrument: string;
  spec: ProbeSpec;
  verdict: ProbeVerdict;
  /** Set exactly when the verdict is `error`. */
  errorCode: string | null;
  evidence: Record<string, unknown>;
  /** Whether the instrument's latest calibration (of this implementation) had passed. */
  calibrated: boolean;
  /** That calibration, if the instrument had one. */
  calibrationId: string | null;
  /** Why the probe ran (a retraction's falsifier, a check by hand), if given. */
  purpose: string | null;
  ranAt: Date;
}

/**
 * One dual-needle calibration of an instrument as recorded (append-only): a positive and a
 * negative control, run against the implementation the fingerprint names.
 */
export interface ProbeCalibration {
  id: string;
  instrument: string;
  kind: ProbeKind;
  /** The implementation it vouches for. */
  fingerprint: string;
  /** True only when the positive control was `verified` and the negative `falsified`. */
  passed: boolean;
  positive: ProbeVerdict;
  negative: ProbeVerdict;
  /** Both control specs and outcomes, and any set-up problem. */
  detail: unknown;
  ranAt: Date;
}
