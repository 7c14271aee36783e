import { EngineError } from '../domain/errors.js';
import {
  PROBE_KINDS,
  PROBE_VERDICTS,
  type ProbeKind,
  type ProbeSpec,
  type ProbeVerdict,
} from '../domain/probe.js';
import { parseProbeSpec } from '../domain/probe-spec.js';
import { requireId } from '../domain/turn.js';
import { ProbeSql, type ProbeCalibration, type ProbeRecord } from '../store/probe-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { calibrate, instrumentFingerprint } from './calibration.js';
import type { ProbeContext, ProbeInstrument } from './instruments.js';
import type { ResolvedProbeConfig } from './probe-config.js';
import { runInstrument } from './run-instrument.js';

export interface ProbeRunOptions {
  /** The subject the probe is about, if any. */
  subject?: string;
  /** Why it ran (e.g. `settle <retraction id>`); kept in the record. */
  purpose?: string;
  /** An instrument by name; default the one for the spec's kind. */
  instrument?: string;
}

export interface CalibrationSummary {
  instrument: string;
  passed: boolean;
  positive: ProbeVerdict;
  negative: ProbeVerdict;
  calibrationId: string;
  /** Why the controls could not be set up or removed, when that happened. */
  problem?: string;
}

export interface ProbeApi {
  /** The verdicts a probe can return. */
  readonly verdicts: readonly ProbeVerdict[];
  /** Validates a spec strictly (INVALID_ARGUMENT) and returns it normalised. */
  parseSpec(raw: unknown): ProbeSpec;
  /** Runs and always records; `calibrated` says whether the instrument's latest calibration passed. */
  run(spec: ProbeSpec, options?: ProbeRunOptions): Promise<ProbeRecord>;
  /** Runs the dual-needle controls of one instrument, or of all, and records each result. */
  calibrate(options?: { instrument?: string }): Promise<CalibrationSummary[]>;
  isCalibrated(instrument: string): Promise<boolean>;
  /** The default instrument name for a spec's kind. */
  instrumentFor(spec: ProbeSpec): string;
  instruments(): Array<{ name: string; kind: ProbeInstrument['kind'] }>;
  get(id: string): Promise<ProbeRecord | null>;
  /** Probe records, newest first (default 50, at most 1000), optionally of one kind. */
  log(options?: { limit?: number; kind?: ProbeKind }): Promise<ProbeRecord[]>;
  /** Recorded calibrations, newest first (default 50, at most 1000). */
  calibrations(options?: { instrument?: string; limit?: number }): Promise<ProbeCalibration[]>;
}

export interface ProbeServiceDeps {
  client: SqlClient;
  config: ResolvedProbeConfig;
  clock: () => Date;
  newId: () => string;
  /** Throws ENGINE_CLOSED once the engine is closed. */
  assertOpen: () => void;
}

function limitOf(limit: number | undefined): number {
  const n = limit ?? 50;
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new EngineError('INVALID_ARGUMENT', '--limit must be a whole number from 1 to 1000');
  }
  return n;
}

export function createProbeService(deps: ProbeServiceDeps): ProbeApi {
  const { client, config, clock, newId, assertOpen } = deps;
  const sql = new ProbeSql(client);
  const subjects = new SubjectSql(client);
  const ctx: ProbeContext = { ...config.settings, sql: client };

  const instrument = (name: string): ProbeInstrument => {
    const found = config.instruments.get(name);
    if (found === undefined) {
      const known = [...config.instruments.keys()].join(', ');
      throw new EngineError(
        'UNKNOWN_INSTRUMENT',
        `no probe instrument "${name}" (known: ${known})`,
      );
    }
    return found;
  };
  const latest = (i: ProbeInstrument) => sql.latestCalibration(i.name, instrumentFingerprint(i));
  const subjectOf = async (subject: string | undefined): Promise<string | null> => {
    if (subject === undefined) return null;
    const id = requireId(subject, 'subject');
    if ((await subjects.get(id)) === null) {
      throw new EngineError('SUBJECT_NOT_FOUND', `subject "${id}" does not exist`);
    }
    return id;
  };

  return {
    verdicts: PROBE_VERDICTS,
    parseSpec: parseProbeSpec,
    instrumentFor(spec) {
      const kind = (spec as { kind?: unknown } | null)?.kind;
      if (!(PROBE_KINDS as readonly unknown[]).includes(kind)) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `probe spec: unknown kind ${JSON.stringify(kind)}`,
        );
      }
      return kind as string;
    },
    instruments() {
      return [...config.instruments.values()].map((i) => ({ name: i.name, kind: i.kind }));
    },
    async run(raw, options = {}) {
      assertOpen();
      const spec = parseProbeSpec(raw);
      const inst = instrument(options.instrument ?? spec.kind);
      if (inst.kind !== spec.kind) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `instrument "${inst.name}" runs ${inst.kind} probes, not ${spec.kind} probes`,
        );
      }
      const subject = await subjectOf(options.subject);
      const purpose = options.purpose?.trim() ?? '';
      const ranAt = clock();
      const calibration = await latest(inst);
      const outcome = await runInstrument(inst, spec, ctx);
      const record: ProbeRecord = {
        id: newId(),
        subject,
        instrument: inst.name,
        spec,
        ...outcome,
        calibrated: calibration?.passed ?? false,
        calibrationId: calibration?.id ?? null,
        purpose: purpose === '' ? null : purpose,
        ranAt,
      };
      await sql.insertRecord(record, spec.kind);
      return record;
    },
    async calibrate(options = {}) {
      assertOpen();
      const list =
        options.instrument === undefined
          ? [...config.instruments.values()]
          : [instrument(options.instrument)];
      const summaries: CalibrationSummary[] = [];
      // One at a time: the controls share the first root and, on PGlite, one connection.
      for (const inst of list) {
        const result = await calibrate(inst, ctx);
        const id = newId();
        await sql.insertCalibration({
          id,
          instrument: result.instrument,
          kind: result.kind,
          fingerprint: result.fingerprint,
          passed: result.passed,
          positive: result.positive,
          negative: result.negative,
          detail: result.detail,
          ranAt: clock(),
        });
        summaries.push({
          instrument: result.instrument,
          passed: result.passed,
          positive: result.positive,
          negative: result.negative,
          calibrationId: id,
          ...(result.detail.problem === undefined ? {} : { problem: result.detail.problem }),
        });
      }
      return summaries;
    },
    async isCalibrated(name) {
      assertOpen();
      return (await latest(instrument(name)))?.passed ?? false;
    },
    async get(id) {
      assertOpen();
      return sql.get(id);
    },
    async log(options = {}) {
      assertOpen();
      const kind = options.kind ?? null;
      if (kind !== null && !(PROBE_KINDS as readonly string[]).includes(kind)) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `--kind must be one of ${PROBE_KINDS.join(', ')}`,
        );
      }
      return sql.list(limitOf(options.limit), kind);
    },
    async calibrations(options = {}) {
      assertOpen();
      // Any name: an instrument no longer configured still has its history.
      return sql.listCalibrations(limitOf(options.limit), options.instrument ?? null);
    },
  };
}
