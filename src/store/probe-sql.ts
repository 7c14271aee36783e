import type { ProbeKind, ProbeSpec, ProbeVerdict } from '../domain/probe.js';
import type { ProbeCalibration, ProbeRecord } from '../domain/probe-record.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface CalibrationDbRow {
  id: string;
  instrument: string;
  kind: ProbeKind;
  fingerprint: string;
  passed: boolean;
  positive_verdict: ProbeVerdict;
  negative_verdict: ProbeVerdict;
  detail: unknown;
  ran_at: Date;
}

interface RecordDbRow {
  id: string;
  subject_id: string | null;
  instrument: string;
  spec: ProbeSpec;
  verdict: ProbeVerdict;
  error_code: string | null;
  evidence: Record<string, unknown>;
  calibrated: boolean;
  calibration_id: string | null;
  purpose: string | null;
  ran_at: Date;
}

const RECORD_COLUMNS = `id, subject_id, instrument, spec, verdict, error_code, evidence, calibrated,
  calibration_id, purpose, ran_at`;

function toRecord(r: RecordDbRow): ProbeRecord {
  return {
    id: r.id,
    subject: r.subject_id,
    instrument: r.instrument,
    spec: r.spec,
    verdict: r.verdict,
    errorCode: r.error_code,
    evidence: r.evidence,
    calibrated: r.calibrated,
    calibrationId: r.calibration_id,
    purpose: r.purpose,
    ranAt: r.ran_at,
  };
}

/** jsonb cannot hold NUL; an instrument's message must not make its own record unwritable. */
function jsonb(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? v.replaceAll('\u0000', '') : v,
  );
}

/** The probe log and the calibrations of instruments (both append-only). */
export class ProbeSql {
  constructor(private readonly db: SqlExecutor) {}

  insertCalibration(c: ProbeCalibration): Promise<void> {
    return guard('recording a calibration', async () => {
      await this.db.query(
        `INSERT INTO probe_calibrations (id, instrument, kind, fingerprint, passed, positive_verdict,
           negative_verdict, detail, ran_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`,
        [
          c.id,
          c.instrument,
          c.kind,
          c.fingerprint,
          c.passed,
          c.positive,
          c.negative,
          jsonb(c.detail),
          c.ranAt,
        ],
      );
    });
  }

  /**
   * The most recent calibration of this implementation of the instrument made on this store, if
   * any: one that came with an imported subject never vouches for a probe run here.
   */
  latestCalibration(
    instrument: string,
    fingerprint: string,
  ): Promise<{ id: string; passed: boolean } | null> {
    return guard('reading calibrations', async () => {
      const { rows } = await this.db.query<{ id: string; passed: boolean }>(
        `SELECT id, passed FROM probe_calibrations
         WHERE instrument = $1 AND fingerprint = $2 AND NOT imported
         ORDER BY seq DESC LIMIT 1`,
        [instrument, fingerprint],
      );
      return rows[0] ?? null;
    });
  }

  /** Newest first; one instrument's, or every instrument's. */
  listCalibrations(
    page: { limit: number; offset: number },
    instrument: string | null,
  ): Promise<ProbeCalibration[]> {
    return guard('reading calibrations', async () => {
      const { rows } = await this.db.query<CalibrationDbRow>(
        `SELECT id, instrument, kind, fingerprint, passed, positive_verdict, negative_verdict,
           detail, ran_at
         FROM probe_calibrations WHERE ($2::text IS NULL OR instrument = $2)
         ORDER BY seq DESC LIMIT $1 OFFSET $3`,
        [page.limit, instrument, page.offset],
      );
      return rows.map((r) => ({
        id: r.id,
        instrument: r.instrument,
        kind: r.kind,
        fingerprint: r.fingerprint,
        passed: r.passed,
        positive: r.positive_verdict,
        negative: r.negative_verdict,
        detail: r.detail,
        ranAt: r.ran_at,
      }));
    });
  }

  insertRecord(r: ProbeRecord, kind: ProbeKind): Promise<void> {
    return guard('recording a probe run', async () => {
      await this.db.query(
        `INSERT INTO probe_records (id, subject_id, instrument, kind, spec, verdict, error_code,
           evidence, calibrated, calibration_id, purpose, ran_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9, $10, $11, $12)`,
        [
          r.id,
          r.subject,
          r.instrument,
          kind,
          jsonb(r.spec),
          r.verdict,
          r.errorCode,
          jsonb(r.evidence),
          r.calibrated,
          r.calibrationId,
          r.purpose,
          r.ranAt,
        ],
      );
    });
  }

  /** One of this subject's probe records; another subject's reads as absent. */
  get(subjectId: string, id: string): Promise<ProbeRecord | null> {
    return guard('reading a probe record', async () => {
      const { rows } = await this.db.query<RecordDbRow>(
        `SELECT ${RECORD_COLUMNS} FROM probe_records WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toRecord(rows[0]);
    });
  }

  /** One subject's records, newest first; of one kind, or of every kind. */
  list(
    subjectId: string,
    page: { limit: number; offset: number },
    kind: ProbeKind | null,
  ): Promise<ProbeRecord[]> {
    return guard('reading the probe log', async () => {
      const { rows } = await this.db.query<RecordDbRow>(
        `SELECT ${RECORD_COLUMNS} FROM probe_records
         WHERE subject_id = $3 AND ($2::text IS NULL OR kind = $2)
         ORDER BY seq DESC LIMIT $1 OFFSET $4`,
        [page.limit, kind, subjectId, page.offset],
      );
      return rows.map(toRecord);
    });
  }
}
