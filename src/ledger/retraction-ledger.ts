import type { FactId, RetractionId } from '../domain/ids.js';
import { EngineError } from '../domain/errors.js';
import { PROBE_VERDICTS, type ProbeSpec, type ProbeVerdict } from '../domain/probe.js';
import {
  CAUGHT_BY,
  checkPolarity,
  DEFAULT_DUE_DAYS,
  dueAt,
  RETRACTION_VERDICTS,
  SETTLED_VERDICTS,
  type RetractionVerdict,
  type SettledVerdict,
} from '../domain/retraction.js';
import {
  checkString,
  dateProblem,
  INPUT_LIMITS,
  optionalDate,
  optionalObject,
  optionalString,
  optionalStringList,
} from '../domain/input.js';
import { parseChoice } from '../domain/vocabulary.js';
import { FactSql } from '../store/fact-sql.js';
import { lockChain } from '../store/decision-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import type { Retraction } from '../domain/retraction-record.js';
import { RetractionSql } from '../store/retraction-sql.js';
import type { LedgerApi, LedgerSigner, RetractInput, SettleInput } from './ledger-types.js';
import type { SqlExecutor } from '../store/sql-client.js';

/** What the ledger needs from the probes layer to settle a falsifier by machine. */
export interface FalsifierProbes {
  /** Validates a probe spec (throws INVALID_ARGUMENT) and returns it normalised. */
  parseSpec(raw: unknown): ProbeSpec;
  instrumentFor(spec: ProbeSpec): string;
  isCalibrated(instrument: string): Promise<boolean>;
  run(
    subjectId: string,
    spec: ProbeSpec,
    options: { purpose: string },
  ): Promise<{
    id: string;
    verdict: ProbeVerdict;
    errorCode: string | null;
    calibrated: boolean;
    evidence: Record<string, unknown>;
  }>;
}

export interface LedgerDeps extends ModuleDeps {
  probes: FalsifierProbes;
  dueDays?: number;
  /** The owner's signed retraction (the gate's), its row written in the decision's transaction. */
  signRetraction: (input: {
    subjectId: string;
    signer: LedgerSigner;
    row: (tx: SqlExecutor) => Promise<Retraction>;
  }) => Promise<unknown>;
}

/** The most days a falsifier may take to mature (a century). */
const MAX_DUE_DAYS = 36_500;

/** A required text field: non-blank, storable, at most `INPUT_LIMITS.fieldLength`. */
function required(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', `${field} is required and must not be blank`, {
      data: { field },
    });
  }
  return checkString(value.trim(), field, INPUT_LIMITS.fieldLength);
}

/** The ledger of one subject, created once per engine by `createLedgerModule`. */
export function createLedgerModule(deps: LedgerDeps): { ledger(subjectId: string): LedgerApi } {
  const ledger = new RetractionLedger(deps);
  return {
    ledger: (subjectId) => ({
      retract: (input) => ledger.retract(subjectId, input),
      get: (id) => ledger.get(subjectId, id),
      list: (options = {}) => ledger.list(subjectId, options),
      due: () => ledger.due(subjectId),
      settle: (input) => ledger.settle(subjectId, input),
    }),
  };
}

/**
 * The typed retraction ledger (seed 000 §5): a disproven belief is taken down with its claim,
 * what it stood on, why it was wrong, what replaces it, and a falsifier whose two observations
 * are checked for polarity. Falsifiers mature and are settled by the owner or by a calibrated probe.
 */
class RetractionLedger {
  constructor(private readonly deps: LedgerDeps) {}

  async retract(subjectId: string, input: RetractInput): Promise<Retraction> {
    const { deps } = this;
    const falsifier = {
      procedure: required(input.procedure, 'procedure'),
      passObservation: optionalString(input.passObservation, 'passObservation') ?? '',
      overturnCondition: optionalString(input.overturnCondition, 'overturnCondition') ?? '',
    };
    checkPolarity(falsifier);
    const caughtBy = parseChoice(CAUGHT_BY, input.caughtBy ?? 'self', 'caughtBy');
    const days = input.dueDays ?? deps.dueDays ?? DEFAULT_DUE_DAYS;
    if (typeof days !== 'number' || !Number.isFinite(days) || days < 0 || days > MAX_DUE_DAYS)
      throw new EngineError('INVALID_ARGUMENT', `dueDays must be from 0 to ${MAX_DUE_DAYS}`, {
        data: { field: 'dueDays' },
      });
    if (input.probe !== undefined) optionalObject(input.probe, 'probe');
    const probe = input.probe === undefined ? null : this.checkProbe(input.probe);
    const now = deps.clock();
    const correctedAt = optionalDate(input.correctedAt, 'correctedAt') ?? now;
    const claimedAt = optionalDate(input.claimedAt, 'claimedAt') ?? null;
    const claimSurface = optionalString(input.claimSurface, 'claimSurface') ?? null;
    const claimRef = optionalString(input.claimRef, 'claimRef') ?? null;
    const tags = optionalStringList(input.tags, 'tags') ?? [];
    const factId = (optionalString(input.factId, 'factId') ?? null) as FactId | null;
    const due = dueAt(correctedAt, days);
    const dueProblem = dateProblem(due);
    if (dueProblem !== null) {
      throw new EngineError('INVALID_ARGUMENT', `the falsifier's due date ${dueProblem}`, {
        data: { field: 'dueDays' },
      });
    }
    const row = {
      id: deps.newId() as RetractionId,
      subjectId,
      claim: required(input.claim, 'claim'),
      claimedAt,
      claimSurface,
      claimRef,
      stoodOn: required(input.stoodOn, 'stoodOn'),
      whyWrong: required(input.whyWrong, 'whyWrong'),
      correctedClaim: required(input.corrected, 'corrected'),
      correctedAt,
      caughtBy,
      tags,
      ...falsifier,
      probe,
      dueAt: due,
      factId,
      recordedAt: now,
    };
    /** Writes the row, after checking that the fact it names (if any) is live. */
    const record = async (tx: SqlExecutor) => {
      const facts = new FactSql(tx);
      if (row.factId !== null) {
        const fact = await facts.get(subjectId, row.factId);
        if (fact === null)
          throw new EngineError(
            'FACT_NOT_FOUND',
            `no fact "${row.factId}" for subject "${subjectId}"`,
          );
        if (fact.status !== 'active') {
          throw new EngineError(
            'FACT_NOT_LIVE',
            `fact "${row.factId}" is ${fact.status}; only a live fact can be retracted`,
          );
        }
      }
      return new RetractionSql(tx).insert(row);
    };
    if (input.signer !== undefined) {
      if (row.factId === null) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          'a signed retraction names the fact it takes down (factId)',
          { data: { field: 'factId' } },
        );
      }
      await deps.signRetraction({ subjectId, signer: input.signer, row: record });
      return this.get(subjectId, row.id);
    }
    return deps.client.transaction(async (tx) => {
      const saved = await record(tx);
      if (row.factId === null) return saved;
      // a fact the owner approved leaves only on the owner's signature: until then it is disputed
      const facts = new FactSql(tx);
      if ((await facts.promotedBy(subjectId, row.factId)) === 'owner') return saved;
      if (!(await facts.retract(subjectId, row.factId, saved.id, now))) {
        throw new EngineError('FACT_NOT_LIVE', `fact "${row.factId}" stopped being live meanwhile`);
      }
      return saved;
    });
  }

  private checkProbe(p: NonNullable<RetractInput['probe']>) {
    const spec = this.deps.probes.parseSpec(p.spec);
    const verdicts = PROBE_VERDICTS.filter((v) => v !== 'error');
    const standsIf = parseChoice(verdicts, p.standsIf, 'probe.standsIf');
    const overturnsIf = parseChoice(verdicts, p.overturnsIf, 'probe.overturnsIf');
    if (standsIf === overturnsIf) {
      throw new EngineError(
        'POLARITY_NOT_DISTINCT',
        'the probe verdict that keeps the retraction standing must differ from the one that overturns it',
      );
    }
    return { spec, standsIf, overturnsIf };
  }

  async get(subjectId: string, id: unknown): Promise<Retraction> {
    const retractionId = required(id, 'retractionId');
    const r = await new RetractionSql(this.deps.client).get(subjectId, retractionId);
    if (r === null || r.subjectId !== subjectId)
      throw new EngineError('RETRACTION_NOT_FOUND', `no retraction "${retractionId}"`);
    return r;
  }

  list(subjectId: string, options: { verdict?: RetractionVerdict }): Promise<Retraction[]> {
    const verdict =
      options.verdict === undefined
        ? undefined
        : parseChoice(RETRACTION_VERDICTS, options.verdict, 'verdict');
    return new RetractionSql(this.deps.client).list(
      subjectId,
      verdict === undefined ? {} : { verdict },
    );
  }

  /** Unchecked falsifiers whose maturity date has passed. */
  due(subjectId: string): Promise<Retraction[]> {
    return new RetractionSql(this.deps.client).list(subjectId, {
      verdict: 'unchecked',
      dueBy: this.deps.clock(),
    });
  }

  async settle(subjectId: string, input: SettleInput): Promise<Retraction> {
    const { deps } = this;
    optionalString(input.by, 'by');
    if (!('runProbe' in input)) required(input.outcome, 'outcome');
    const row = await this.get(subjectId, input.retractionId);
    if (row.verdict !== 'unchecked') {
      throw new EngineError(
        'ALREADY_SETTLED',
        `retraction "${row.id}" was settled: ${row.verdict}`,
      );
    }
    const now = deps.clock();
    if (row.dueAt.getTime() > now.getTime()) {
      throw new EngineError(
        'NOT_DUE',
        `the falsifier of "${row.id}" matures on ${row.dueAt.toISOString()}`,
      );
    }
    let verdict: SettledVerdict;
    let outcome: string;
    let probeRecordId: string | null = null;
    let by = input.by ?? 'owner';
    if ('runProbe' in input) {
      if (row.probe === null)
        throw new EngineError('NO_PROBE', `retraction "${row.id}" has no machine probe`);
      // Parsed again: what the store hands back is checked like any other input.
      const spec = deps.probes.parseSpec(row.probe.spec);
      const instrument = deps.probes.instrumentFor(spec);
      if (!(await deps.probes.isCalibrated(instrument))) {
        throw new EngineError(
          'INSTRUMENT_NOT_CALIBRATED',
          `instrument "${instrument}" has not passed its dual-needle calibration; calibrate it first (probes.calibrate)`,
        );
      }
      const record = await deps.probes.run(row.subjectId, spec, {
        purpose: `settle ${row.id}`,
      });
      if (!record.calibrated) {
        throw new EngineError(
          'INSTRUMENT_NOT_CALIBRATED',
          `instrument "${instrument}" is not calibrated`,
          {
            data: { recordId: record.id },
          },
        );
      }
      if (record.verdict === row.probe.standsIf) verdict = 'stands';
      else if (record.verdict === row.probe.overturnsIf) verdict = 'overturned';
      else {
        throw new EngineError(
          'PROBE_INCONCLUSIVE',
          `the probe answered ${record.verdict}${record.errorCode === null ? '' : ` (${record.errorCode})`}, which decides neither side; the retraction stays unchecked`,
          { data: { recordId: record.id } },
        );
      }
      outcome = `probe ${instrument} answered ${record.verdict}: ${JSON.stringify(record.evidence)}`;
      probeRecordId = record.id;
      by = input.by ?? 'probe';
    } else {
      verdict = parseChoice(SETTLED_VERDICTS, input.verdict, 'verdict');
      outcome = required(input.outcome, 'outcome');
    }
    return deps.client.transaction(async (tx) => {
      await lockChain(tx, row.subjectId);
      const facts = new FactSql(tx);
      let restoredFactId: string | null = null;
      let restoreLive = false;
      if (verdict === 'overturned' && row.factId !== null) {
        const original = await facts.get(row.subjectId, row.factId);
        // a fact this retraction never took down (it awaited the owner) needs no restoring
        if (
          original !== null &&
          original.status === 'retracted' &&
          original.retractionId === row.id
        ) {
          restoredFactId = deps.newId();
          await facts.insertRestored(original, restoredFactId, now);
          // Only a calibrated probe's verdict restores straight to live memory, and never over a
          // value the owner approved after the retraction; otherwise the restoration waits in
          // the pile for a signed owner decision, like any other proposal.
          const newer =
            original.key === null
              ? false
              : await facts.liveDecidedSince(
                  row.subjectId,
                  original.slot,
                  original.key,
                  row.recordedAt,
                );
          restoreLive = probeRecordId !== null && !newer;
        }
      }
      const ledger = new RetractionSql(tx);
      if (
        !(await ledger.settle(row.subjectId, row.id, {
          verdict,
          at: now,
          outcome,
          by,
          probeRecordId,
          restoredFactId,
        }))
      ) {
        throw new EngineError('ALREADY_SETTLED', `retraction "${row.id}" was settled meanwhile`);
      }
      // Restored after the settlement row names it, so the restoration is accounted for.
      if (restoredFactId !== null && restoreLive) {
        await facts.promote(row.subjectId, restoredFactId, now, 'restoration');
      }
      return (await ledger.get(row.subjectId, row.id)) as Retraction;
    });
  }
}
