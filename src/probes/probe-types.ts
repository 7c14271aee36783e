import type { PageOptions } from '../domain/input.js';
import type { ProbeKind, ProbeSpec, ProbeVerdict } from '../domain/probe.js';
import type { ProbeCalibration, ProbeRecord } from '../domain/probe-record.js';

/** One instrument's calibration: its two controls must give different verdicts. */
export interface CalibrationSummary {
  instrument: string;
  passed: boolean;
  positive: ProbeVerdict;
  negative: ProbeVerdict;
  calibrationId: string;
  /** Why the controls could not be set up or removed, when that happened. */
  problem?: string;
}

/** Claim probes (file, sql, http) and their dual-needle calibration. */
export interface ProbesApi {
  /** Runs a probe about this subject and records it; `calibrated` says if its instrument is trusted. */
  run(spec: ProbeSpec, options?: { purpose?: string; instrument?: string }): Promise<ProbeRecord>;
  /** One of the subject's probe records (PROBE_RECORD_NOT_FOUND otherwise). */
  get(recordId: string): Promise<ProbeRecord>;
  /** The subject's probe records, newest first (default 50, at most 1000). */
  log(options?: PageOptions & { kind?: ProbeKind }): Promise<ProbeRecord[]>;
  /** Runs the positive and negative controls of one instrument, or of all, and records them. */
  calibrate(options?: { instrument?: string }): Promise<CalibrationSummary[]>;
  /** Recorded calibrations (instrument-wide, not per subject), newest first. */
  calibrations(options?: PageOptions & { instrument?: string }): Promise<ProbeCalibration[]>;
  /** Whether the instrument's latest calibration passed. */
  isCalibrated(instrument: string): Promise<boolean>;
  /** The configured instruments. */
  instruments(): Promise<Array<{ name: string; kind: ProbeKind }>>;
}
