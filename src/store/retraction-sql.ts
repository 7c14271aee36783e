import type { FactId, RetractionId } from '../domain/ids.js';
import type { Retraction } from '../domain/retraction-record.js';
import type { CaughtBy, RetractionVerdict } from '../domain/retraction.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface Row {
  id: RetractionId;
  subject_id: string;
  claim: string;
  claimed_at: Date | null;
  claim_surface: string | null;
  claim_ref: string | null;
  stood_on: string;
  why_wrong: string;
  corrected_claim: string;
  corrected_at: Date;
  caught_by: CaughtBy;
  tags: string[];
  procedure: string;
  pass_observation: string;
  overturn_condition: string;
  probe_spec: unknown;
  probe_stands_verdict: string | null;
  probe_overturns_verdict: string | null;
  due_at: Date;
  fact_id: FactId | null;
  verdict: RetractionVerdict;
  settled_at: Date | null;
  settled_outcome: string | null;
  settled_by: string | null;
  settled_probe_record_id: string | null;
  restored_fact_id: FactId | null;
  recorded_at: Date;
}

const COLUMNS = `id, subject_id, claim, claimed_at, claim_surface, claim_ref, stood_on, why_wrong,
  corrected_claim, corrected_at, caught_by, tags, procedure, pass_observation, overturn_condition,
  probe_spec, probe_stands_verdict, probe_overturns_verdict, due_at, fact_id, verdict, settled_at,
  settled_outcome, settled_by, settled_probe_record_id, restored_fact_id, recorded_at`;

/** A row's probe and its two verdicts, as `Retraction.probe` holds them (null unless all three). */
export function storedProbe(r: {
  probe_spec: unknown;
  probe_stands_verdict: string | null;
  probe_overturns_verdict: string | null;
}): Retraction['probe'] {
  return r.probe_spec === null ||
    r.probe_spec === undefined ||
    r.probe_stands_verdict === null ||
    r.probe_overturns_verdict === null
    ? null
    : {
        spec: r.probe_spec,
        standsIf: r.probe_stands_verdict,
        overturnsIf: r.probe_overturns_verdict,
      };
}

function toRetraction(r: Row): Retraction {
  return {
    id: r.id,
    subjectId: r.subject_id,
    claim: r.claim,
    claimedAt: r.claimed_at,
    claimSurface: r.claim_surface,
    claimRef: r.claim_ref,
    stoodOn: r.stood_on,
    whyWrong: r.why_wrong,
    correctedClaim: r.corrected_claim,
    correctedAt: r.corrected_at,
    caughtBy: r.caught_by,
    tags: r.tags,
    procedure: r.procedure,
    passObservation: r.pass_observation,
    overturnCondition: r.overturn_condition,
    probe: storedProbe(r),
    dueAt: r.due_at,
    factId: r.fact_id,
    verdict: r.verdict,
    settledAt: r.settled_at,
    settledOutcome: r.settled_outcome,
    settledBy: r.settled_by,
    settledProbeRecordId: r.settled_probe_record_id,
    restoredFactId: r.restored_fact_id,
    recordedAt: r.recorded_at,
  };
}

export type NewRetraction = Omit<
  Retraction,
  | 'verdict'
  | 'settledAt'
  | 'settledOutcome'
  | 'settledBy'
  | 'settledProbeRecordId'
  | 'restoredFactId'
>;

export interface Settlement {
  verdict: Exclude<RetractionVerdict, 'unchecked'>;
  at: Date;
  outcome: string;
  by: string;
  probeRecordId: string | null;
  restoredFactId: string | null;
}

export class RetractionSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(r: NewRetraction): Promise<Retraction> {
    return guard('recording a retraction', async () => {
      const { rows } = await this.db.query<Row>(
        `INSERT INTO retractions (subject_id, id, claim, claimed_at, claim_surface, claim_ref, stood_on,
           why_wrong, corrected_claim, corrected_at, caught_by, tags, procedure, pass_observation,
           overturn_condition, probe_spec, probe_stands_verdict, probe_overturns_verdict, due_at, fact_id,
           recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text[], $13, $14, $15, $16::jsonb, $17,
                 $18, $19, $20, $21)
         RETURNING ${COLUMNS}`,
        [
          r.subjectId,
          r.id,
          r.claim,
          r.claimedAt,
          r.claimSurface,
          r.claimRef,
          r.stoodOn,
          r.whyWrong,
          r.correctedClaim,
          r.correctedAt,
          r.caughtBy,
          r.tags,
          r.procedure,
          r.passObservation,
          r.overturnCondition,
          r.probe === null ? null : JSON.stringify(r.probe.spec),
          r.probe?.standsIf ?? null,
          r.probe?.overturnsIf ?? null,
          r.dueAt,
          r.factId,
          r.recordedAt,
        ],
      );
      return toRetraction(rows[0] as Row);
    });
  }

  /** One of this subject's retractions; another subject's reads as absent. */
  get(subjectId: string, id: string): Promise<Retraction | null> {
    return guard('reading a retraction', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM retractions WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toRetraction(rows[0]);
    });
  }

  list(
    subjectId: string,
    options: { verdict?: RetractionVerdict; dueBy?: Date; limit?: number } = {},
  ): Promise<Retraction[]> {
    return guard('listing retractions', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM retractions
         WHERE subject_id = $1 AND ($2::text IS NULL OR verdict = $2) AND ($3::timestamptz IS NULL OR due_at <= $3)
         ORDER BY corrected_at DESC, id LIMIT $4`,
        [subjectId, options.verdict ?? null, options.dueBy ?? null, options.limit ?? 1000],
      );
      return rows.map(toRetraction);
    });
  }

  /**
   * Claims that stay retracted (every verdict but overturned), for the gate's RETRACTED_CLAIM
   * rule. "Newer than the retraction" means newer than its entry in the ledger: a correction
   * back-dated with `correctedAt` must not let the turns it refuted count as new evidence.
   */
  standingClaims(subjectId: string): Promise<Array<{ text: string; retractedAt: Date }>> {
    return guard('reading retracted claims', async () => {
      // one JSON document, not a row per claim: every arrival with a message and every proposal
      // reads them all, and on PGlite decoding a thousand rows costs more than the query
      const { rows } = await this.db.query<{ doc: string | null }>(
        `SELECT json_agg(json_build_array(claim,
                  (extract(epoch FROM greatest(corrected_at, recorded_at)) * 1000)::float8)
                  ORDER BY recorded_at, id)::text AS doc
         FROM retractions r WHERE subject_id = $1 AND verdict <> 'overturned'
           -- a row naming a fact stands once the fact left live memory: an unsigned dispute of a
           -- fact the owner approved retracts nothing yet
           AND (fact_id IS NULL OR NOT EXISTS (SELECT 1 FROM facts f WHERE f.subject_id = r.subject_id
                                               AND f.id = r.fact_id AND f.status = 'active'))`,
        [subjectId],
      );
      const list = JSON.parse(rows[0]?.doc ?? 'null') as Array<[string, number]> | null;
      return (list ?? []).map(([text, at]) => ({ text, retractedAt: new Date(at) }));
    });
  }

  /** Writes a settlement once; returns false when the row was already settled. */
  settle(subjectId: string, id: string, s: Settlement): Promise<boolean> {
    return guard('settling a retraction', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        `UPDATE retractions SET verdict = $3, settled_at = $4, settled_outcome = $5, settled_by = $6,
                settled_probe_record_id = $7, restored_fact_id = $8
         WHERE subject_id = $1 AND id = $2 AND verdict = 'unchecked' RETURNING id`,
        [subjectId, id, s.verdict, s.at, s.outcome, s.by, s.probeRecordId, s.restoredFactId],
      );
      return rows.length === 1;
    });
  }
}
