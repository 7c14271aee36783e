import { EngineError } from '../domain/errors.js';
import {
  CAUGHT_BY,
  checkPolarity,
  DEFAULT_DUE_DAYS,
  dueAt,
  SETTLED_VERDICTS,
  type CaughtBy,
  type SettledVerdict,
} from '../domain/retraction.js';
import { requireId } from '../domain/turn.js';
import { FactSql } from '../store/fact-sql.js';
import { lockChain } from '../store/decision-sql.js';
import { RetractionSql, type Retraction } from '../store/retraction-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';

/** What the ledger needs from the probes layer to settle a falsifier by machine. */
export interface FalsifierProbes {
  /** Validates a probe spec (throws INVALID_ARGUMENT) and returns it normalised. */
  parseSpec(raw: unknown): unknown;
  /** The verdicts a probe can return; a falsifier maps two of them to its sides. */
  verdicts: readonly string[];
  instrumentFor(spec: unknown): string;
  isCalibrated(instrument: string): Promise<boolean>;
  run(
    spec: unknown,
    options: { subject: string; purpose: string },
  ): Promise<{
    id: string;
    verdict: string;
    errorCode: string | null;
    calibrated: boolean;
    evidence: Record<string, unknown>;
  }>;
}

export interface RetractInput {
  subject?: string;
  claim: string;
  stoodOn: string;
  whyWrong: string;
  corrected: string;
  procedure: string;
  passObservation: string;
  overturnCondition: string;
  caughtBy?: string;
  claimedAt?: Date;
  claimSurface?: string;
  claimRef?: string;
  tags?: string[];
  /** When the error was caught; default now. The falsifier matures `dueDays` later. */
  correctedAt?: Date;
  dueDays?: number;
  /** A live fact this retraction takes down. */
  factId?: string;
  probe?: { spec: unknown; standsIf: string; overturnsIf: string };
}

export type SettleInput =
  | { id: string; runProbe: true; by?: string }
  | { id: string; verdict: string; outcome: string; by?: string };

export interface LedgerDeps {
  client: SqlClient;
  probes: FalsifierProbes;
  clock: () => Date;
  newId: () => string;
  defaultSubject: string;
  dueDays?: number;
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', `${what} is required and must not be blank`);
  }
  return value.trim();
}

/**
 * The typed retraction ledger (seed 000 §5): a disproven belief is taken down with its claim,
 * what it stood on, why it was wrong, what replaces it, and a falsifier whose two observations
 * are checked for polarity. Falsifiers mature and are settled by the owner or by a calibrated probe.
 */
export class RetractionLedger {
  constructor(private readonly deps: LedgerDeps) {}

  async retract(input: RetractInput): Promise<Retraction> {
    const { deps } = this;
    const subjectId = requireId(input.subject ?? deps.defaultSubject, 'subject');
    const falsifier = {
      procedure: required(input.procedure, 'the procedure (--procedure)'),
      passObservation: input.passObservation,
      overturnCondition: input.overturnCondition,
    };
    checkPolarity(falsifier);
    const caughtBy = (input.caughtBy ?? 'self') as CaughtBy;
    if (!CAUGHT_BY.includes(caughtBy)) {
      throw new EngineError('INVALID_ARGUMENT', `caught by must be one of ${CAUGHT_BY.join(', ')}`);
    }
    const days = input.dueDays ?? deps.dueDays ?? DEFAULT_DUE_DAYS;
    if (!Number.isFinite(days) || days < 0)
      throw new EngineError('INVALID_ARGUMENT', 'due days must be 0 or more');
    const probe = input.probe === undefined ? null : this.checkProbe(input.probe);
    const now = deps.clock();
    const correctedAt = input.correctedAt ?? now;
    const row = {
      id: deps.newId(),
      subjectId,
      claim: required(input.claim, 'the claim (--claim)'),
      claimedAt: input.claimedAt ?? null,
      claimSurface: input.claimSurface ?? null,
      claimRef: input.claimRef ?? null,
      stoodOn: required(input.stoodOn, 'what the claim stood on (--stood-on)'),
      whyWrong: required(input.whyWrong, 'why it was wrong (--why-wrong)'),
      correctedClaim: required(input.corrected, 'the corrected claim (--corrected)'),
      correctedAt,
      caughtBy,
      tags: input.tags ?? [],
      ...falsifier,
      probe,
      dueAt: dueAt(correctedAt, days),
      factId: input.factId ?? null,
      recordedAt: now,
    };
    return deps.client.transaction(async (tx) => {
      if ((await new SubjectSql(tx).get(subjectId)) === null) {
        throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
      }
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
      const saved = await new RetractionSql(tx).insert(row);
      if (row.factId !== null && !(await facts.retract(subjectId, row.factId, saved.id, now))) {
        throw new EngineError('FACT_NOT_LIVE', `fact "${row.factId}" stopped being live meanwhile`);
      }
      return saved;
    });
  }

  private checkProbe(p: { spec: unknown; standsIf: string; overturnsIf: string }) {
    const spec = this.deps.probes.parseSpec(p.spec);
    const verdicts = this.deps.probes.verdicts.filter((v) => v !== 'error');
    for (const [side, v] of [
      ['standsIf', p.standsIf],
      ['overturnsIf', p.overturnsIf],
    ] as const) {
      if (!verdicts.includes(v)) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `probe ${side} must be one of ${verdicts.join(', ')}, not "${v}"`,
        );
      }
    }
    if (p.standsIf === p.overturnsIf) {
      throw new EngineError(
        'POLARITY_NOT_DISTINCT',
        'the probe verdict that keeps the retraction standing must differ from the one that overturns it',
      );
    }
    return { spec, standsIf: p.standsIf, overturnsIf: p.overturnsIf };
  }

  async get(id: string): Promise<Retraction> {
    const r = await new RetractionSql(this.deps.client).get(id);
    if (r === null) throw new EngineError('RETRACTION_NOT_FOUND', `no retraction "${id}"`);
    return r;
  }

  list(options: { subject?: string; verdict?: string } = {}): Promise<Retraction[]> {
    const subjectId = requireId(options.subject ?? this.deps.defaultSubject, 'subject');
    const verdict = options.verdict;
    if (verdict !== undefined && !['unchecked', ...SETTLED_VERDICTS].includes(verdict)) {
      throw new EngineError('INVALID_ARGUMENT', `unknown verdict "${verdict}"`);
    }
    return new RetractionSql(this.deps.client).list(
      subjectId,
      verdict === undefined ? {} : { verdict: verdict as SettledVerdict },
    );
  }

  /** Unchecked falsifiers whose maturity date has passed. */
  due(options: { subject?: string } = {}): Promise<Retraction[]> {
    const subjectId = requireId(options.subject ?? this.deps.defaultSubject, 'subject');
    return new RetractionSql(this.deps.client).list(subjectId, {
      verdict: 'unchecked',
      dueBy: this.deps.clock(),
    });
  }

  async settle(input: SettleInput): Promise<Retraction> {
    const { deps } = this;
    const row = await this.get(input.id);
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
      const instrument = deps.probes.instrumentFor(row.probe.spec);
      if (!(await deps.probes.isCalibrated(instrument))) {
        throw new EngineError(
          'INSTRUMENT_NOT_CALIBRATED',
          `instrument "${instrument}" has not passed its dual-needle calibration; run \`memledger probe calibrate\``,
        );
      }
      const record = await deps.probes.run(row.probe.spec, {
        subject: row.subjectId,
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
      const v = SETTLED_VERDICTS.find((x) => x === input.verdict);
      if (v === undefined) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `a settlement verdict is ${SETTLED_VERDICTS.join(', ')}, not "${input.verdict}"`,
        );
      }
      verdict = v;
      outcome = required(input.outcome, 'the outcome (--outcome)');
    }
    return deps.client.transaction(async (tx) => {
      await lockChain(tx, row.subjectId);
      const facts = new FactSql(tx);
      let restoredFactId: string | null = null;
      let restoreLive = false;
      if (verdict === 'overturned' && row.factId !== null) {
        const original = await facts.get(row.subjectId, row.factId);
        if (original !== null) {
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
        !(await ledger.settle(row.id, {
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
      return (await ledger.get(row.id)) as Retraction;
    });
  }
}
