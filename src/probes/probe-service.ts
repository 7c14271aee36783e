import { EngineError } from '../domain/errors.js';
import { PROBE_KINDS, type ProbeSpec } from '../domain/probe.js';
import { parseProbeSpec } from '../domain/probe-spec.js';
import { optionalString, pageOf } from '../domain/input.js';
import { parseChoice } from '../domain/vocabulary.js';
import type { FalsifierProbes } from '../ledger/retraction-ledger.js';
import type { ModuleDeps } from '../store/module-deps.js';
import type { ProbeRecord } from '../domain/probe-record.js';
import { ProbeSql } from '../store/probe-sql.js';
import { boundedSql } from '../store/bounded-sql.js';
import type { CalibrationSummary, ProbesApi } from './probe-types.js';
import { calibrate, instrumentFingerprint } from './calibration.js';
import type { ProbeContext, ProbeInstrument } from './instruments.js';
import type { ResolvedProbeConfig } from './probe-config.js';
import { runInstrument } from './run-instrument.js';

export interface ProbeModuleDeps extends ModuleDeps {
  config: ResolvedProbeConfig;
}

export interface ProbeModule {
  probes(subjectId: string): ProbesApi;
  /** What the retraction ledger needs to settle a falsifier by machine. */
  readonly falsifiers: FalsifierProbes;
}

/** How many records or calibrations one page holds when the caller names no limit. */
const DEFAULT_PROBE_PAGE = 50;

/** Claim probes and their calibration; records and the log are per subject, calibration is per instrument. */
export function createProbeModule(deps: ProbeModuleDeps): ProbeModule {
  const { client, config, clock, newId } = deps;
  const sql = new ProbeSql(client);
  // Instruments read the store and can change nothing in it (a host's own instrument too), and
  // a statement of theirs ends at its timeout without holding up the rest of the process.
  const ctx: ProbeContext = { ...config.settings, sql: boundedSql(client) };

  const instrument = (name: unknown): ProbeInstrument => {
    const found = typeof name === 'string' ? config.instruments.get(name) : undefined;
    if (found === undefined) {
      const known = [...config.instruments.keys()].join(', ');
      throw new EngineError(
        'UNKNOWN_INSTRUMENT',
        `no probe instrument "${String(name)}" (known: ${known})`,
      );
    }
    return found;
  };
  const latest = (i: ProbeInstrument) => sql.latestCalibration(i.name, instrumentFingerprint(i));
  const instrumentFor = (spec: ProbeSpec): string => {
    const kind = (spec as { kind?: unknown } | null)?.kind;
    if (!(PROBE_KINDS as readonly unknown[]).includes(kind)) {
      throw new EngineError('INVALID_ARGUMENT', `probe spec: unknown kind ${JSON.stringify(kind)}`);
    }
    return kind as string;
  };
  const isCalibrated = async (name: string) => (await latest(instrument(name)))?.passed ?? false;

  const run = async (
    subjectId: string,
    raw: unknown,
    options: { purpose?: string; instrument?: string } = {},
  ): Promise<ProbeRecord> => {
    const purpose = optionalString(options.purpose, 'purpose')?.trim() ?? '';
    const named = optionalString(options.instrument, 'instrument');
    const spec = parseProbeSpec(raw);
    const inst = instrument(named ?? spec.kind);
    if (inst.kind !== spec.kind) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `instrument "${inst.name}" runs ${inst.kind} probes, not ${spec.kind} probes`,
      );
    }
    const ranAt = clock();
    const calibration = await latest(inst);
    const outcome = await runInstrument(inst, spec, ctx);
    const record: ProbeRecord = {
      id: newId(),
      subject: subjectId,
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
  };

  const calibrateAll = async (options: { instrument?: string } = {}) => {
    optionalString(options.instrument, 'instrument');
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
  };

  return {
    falsifiers: { parseSpec: parseProbeSpec, instrumentFor, isCalibrated, run },
    probes: (subjectId) => ({
      run: (spec, options = {}) => run(subjectId, spec, options),
      async get(id) {
        const record = typeof id === 'string' ? await sql.get(subjectId, id) : null;
        if (record === null || record.subject !== subjectId) {
          throw new EngineError('PROBE_RECORD_NOT_FOUND', `no probe record "${String(id)}"`);
        }
        return record;
      },
      async log(options = {}) {
        const kind =
          options.kind === undefined ? null : parseChoice(PROBE_KINDS, options.kind, 'kind');
        return sql.list(subjectId, pageOf(options, DEFAULT_PROBE_PAGE), kind);
      },
      calibrate: calibrateAll,
      async calibrations(options = {}) {
        // Any name: an instrument no longer configured still has its history.
        const name = optionalString(options.instrument, 'instrument') ?? null;
        return sql.listCalibrations(pageOf(options, DEFAULT_PROBE_PAGE), name);
      },
      isCalibrated: (name) => isCalibrated(name),
      async instruments() {
        return [...config.instruments.values()].map((i) => ({ name: i.name, kind: i.kind }));
      },
    }),
  };
}
