import type { DecisionLink } from '../domain/decision-chain.js';
import type { Fact, FactStatus } from '../domain/fact.js';
import type { ActiveFactEvidence, DepartedFactEvidence } from '../domain/trust.js';
import { decisionColumns, toLink, type DecisionDbRow } from './decision-sql.js';
import { FACT_COLUMNS, toFact, type FactDbRow } from './fact-sql.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** One cheap look at a subject's chain: enough to tell whether a cached verification still holds. */
export interface ChainProbe {
  publicKeyPem: string | null;
  keyId: string | null;
  /** Links stored, and the highest seq (equal when the seqs are 1..n with no gap). */
  count: number;
  maxSeq: number;
  /** The stored hash of the link at the seq asked about (the cached tip), or null. */
  hashAtTip: string | null;
  /** The longest chain an arrival recorded seeing, and the hash it saw at that length. */
  seen: { length: number; hash: string; hashNow: string | null } | null;
}

/** A stored-as-live fact's row version (xmin changes with every update of the row). */
export interface FactVersion {
  id: string;
  version: string;
}

/** The reads that decide what is live: the chain, the stored-as-live facts and what backs them. */
export class TrustSql {
  constructor(private readonly db: SqlExecutor) {}

  probe(subjectId: string, tipSeq: number): Promise<ChainProbe | null> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<{
        pk: string | null;
        kid: string | null;
        n: number;
        m: number | null;
        tip_hash: string | null;
        seen_length: number | null;
        seen_head: string | null;
        seen_hash_now: string | null;
      }>(
        `SELECT s.owner_public_key AS pk, s.owner_key_id AS kid,
                (SELECT count(*)::int FROM decisions WHERE subject_id = $1) AS n,
                (SELECT max(seq) FROM decisions WHERE subject_id = $1) AS m,
                (SELECT hash FROM decisions WHERE subject_id = $1 AND seq = $2) AS tip_hash,
                mf.chain_length AS seen_length, mf.chain_head AS seen_head,
                (SELECT hash FROM decisions WHERE subject_id = $1 AND seq = mf.chain_length)
                  AS seen_hash_now
         FROM subjects s
         LEFT JOIN LATERAL (
           SELECT chain_length, chain_head FROM arrival_manifests
           WHERE subject_id = $1 AND chain_length IS NOT NULL AND chain_length > 0
           ORDER BY chain_length DESC LIMIT 1
         ) mf ON true
         WHERE s.id = $1`,
        [subjectId, tipSeq],
      );
      const r = rows[0];
      if (r === undefined) return null;
      return {
        publicKeyPem: r.pk,
        keyId: r.kid,
        count: r.n,
        maxSeq: r.m ?? 0,
        hashAtTip: r.tip_hash,
        seen:
          r.seen_length === null || r.seen_head === null
            ? null
            : { length: r.seen_length, hash: r.seen_head, hashNow: r.seen_hash_now },
      };
    });
  }

  /**
   * A digest of the links up to `seq`: their count and the sum of their row versions (xmin).
   * Any update, delete or re-insert of one of them changes it (a new row version is a newer,
   * larger transaction id), appends after `seq` do not.
   */
  linkDigest(subjectId: string, seq: number): Promise<string> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<{ d: string }>(
        `SELECT count(*)::text || ':' || coalesce(sum(xmin::text::bigint), 0)::text AS d
         FROM decisions WHERE subject_id = $1 AND seq <= $2`,
        [subjectId, seq],
      );
      return rows[0]?.d ?? '';
    });
  }

  /** The links after `seq`, in order. */
  linksAfter(subjectId: string, seq: number): Promise<DecisionLink[]> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<DecisionDbRow>(
        `SELECT ${decisionColumns} FROM decisions WHERE subject_id = $1 AND seq > $2 ORDER BY seq`,
        [subjectId, seq],
      );
      return rows.map(toLink);
    });
  }

  /** The subject's facts with these ids. */
  facts(subjectId: string, ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading facts', async () => {
      const { rows } = await this.db.query<FactDbRow>(
        `SELECT ${FACT_COLUMNS} FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])`,
        [subjectId, ids],
      );
      return rows.map(toFact);
    });
  }

  /** The ids and row versions of every fact the store shows as live. */
  activeVersions(subjectId: string): Promise<FactVersion[]> {
    return guard('reading live facts', async () => {
      const { rows } = await this.db.query<{ id: string; v: string }>(
        `SELECT id, xmin::text AS v FROM facts WHERE subject_id = $1 AND status = 'active'`,
        [subjectId],
      );
      return rows.map((r) => ({ id: r.id, version: r.v }));
    });
  }

  /** Stored-as-live facts with what could back them: promotion, receipt, ledger, restoration. */
  activeEvidence(
    subjectId: string,
    ids: readonly string[],
  ): Promise<Array<ActiveFactEvidence & { version: string }>> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading live facts', async () => {
      const { rows } = await this.db.query<
        FactDbRow & {
          v: string;
          promoted_by: ActiveFactEvidence['promotedBy'];
          receipt_tools: string[] | null;
          ledger_retracted: boolean;
          restoration_settled: boolean;
        }
      >(
        `SELECT ${prefixed('f')}, f.xmin::text AS v, f.promoted_by,
                CASE WHEN t.receipt_kind = 'tools' THEN t.receipt_tools END AS receipt_tools,
                EXISTS (SELECT 1 FROM retractions r
                        WHERE r.subject_id = f.subject_id AND r.fact_id = f.id) AS ledger_retracted,
                EXISTS (SELECT 1 FROM retractions r
                        WHERE r.subject_id = f.subject_id AND r.restored_fact_id = f.id
                          AND r.fact_id = f.restored_from_id AND r.verdict = 'overturned'
                          AND r.settled_probe_record_id IS NOT NULL) AS restoration_settled
         FROM facts f LEFT JOIN turns t ON t.id = f.evidence_turn_id AND t.subject_id = f.subject_id
         WHERE f.subject_id = $1 AND f.id = ANY($2::text[]) AND f.status = 'active'`,
        [subjectId, ids],
      );
      const originals = new Map(
        (
          await this.facts(
            subjectId,
            rows.flatMap((r) => (r.restored_from_id === null ? [] : [r.restored_from_id])),
          )
        ).map((f) => [f.id, f]),
      );
      return rows.map((r) => ({
        fact: toFact(r),
        version: r.v,
        promotedBy: r.promoted_by,
        receiptTools: r.receipt_tools,
        ledgerRetracted: r.ledger_retracted,
        restoration:
          r.restored_from_id === null
            ? null
            : {
                original: originals.get(r.restored_from_id) ?? null,
                settled: r.restoration_settled,
              },
      }));
    });
  }

  /** Facts the chain keeps live that the store does not show as live, with what explains it. */
  departed(subjectId: string, ids: readonly string[]): Promise<DepartedFactEvidence[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading facts', async () => {
      const rows = await this.departures(subjectId, 'f.id = ANY($2::text[])', [ids]);
      const found = new Map(rows.map((r) => [r.id, r]));
      // A fact the chain approved that is gone from the table is departed too (deleted).
      return ids.map(
        (id) =>
          found.get(id) ?? {
            id,
            slot: '',
            key: null,
            status: 'proposed',
            validTo: null,
            ledgerRetracted: false,
            supersededBy: null,
          },
      );
    });
  }

  /**
   * Facts that went live with no decision of their own (on a receipt, or restored) and are no
   * longer live, with what explains it, and what backed them: `tool`, `recordedAt` and
   * `restoredFrom` for the caller to check against the chain.
   */
  unsignedDeparted(subjectId: string): Promise<
    Array<
      DepartedFactEvidence & {
        promotedBy: string;
        origin: string;
        tool: string | null;
        recordedAt: Date;
        restoredFrom: string | null;
      }
    >
  > {
    return guard('reading facts', () =>
      this.departures(subjectId, `f.promoted_by IN ('receipt', 'restoration')`, []),
    );
  }

  private async departures(subjectId: string, where: string, params: unknown[]) {
    const { rows } = await this.db.query<{
      id: string;
      slot: string;
      key: string | null;
      status: FactStatus;
      valid_to: Date | null;
      promoted_by: string;
      origin: string;
      evidence_tool: string | null;
      recorded_at: Date;
      restored_from_id: string | null;
      ledger_retracted: boolean;
      n_id: string | null;
      n_slot: string | null;
      n_key: string | null;
      n_supersedes_id: string | null;
      n_status: FactStatus | null;
      n_promoted_by: string | null;
    }>(
      `SELECT f.id, f.slot, f.key, f.status, f.valid_to, f.promoted_by, f.origin, f.evidence_tool,
              f.recorded_at, f.restored_from_id,
              EXISTS (SELECT 1 FROM retractions r WHERE r.subject_id = f.subject_id
                      AND r.fact_id = f.id AND r.id = f.retraction_id) AS ledger_retracted,
              n.id AS n_id, n.slot AS n_slot, n.key AS n_key, n.supersedes_id AS n_supersedes_id,
              n.status AS n_status, n.promoted_by AS n_promoted_by
       FROM facts f
       LEFT JOIN facts n ON n.subject_id = f.subject_id AND n.id = f.superseded_by_id
       WHERE f.subject_id = $1 AND f.status <> 'active' AND ${where}`,
      [subjectId, ...params],
    );
    return rows.map((r) => ({
      id: r.id,
      slot: r.slot,
      key: r.key,
      status: r.status,
      validTo:
        r.valid_to instanceof Date && Number.isFinite(r.valid_to.getTime()) ? r.valid_to : null,
      ledgerRetracted: r.ledger_retracted,
      supersededBy:
        r.n_id === null
          ? null
          : {
              id: r.n_id,
              slot: r.n_slot ?? '',
              key: r.n_key,
              supersedesId: r.n_supersedes_id,
              status: r.n_status ?? 'proposed',
              promotedBy: r.n_promoted_by,
            },
      promotedBy: r.promoted_by,
      origin: r.origin,
      tool: r.evidence_tool,
      recordedAt: r.recorded_at instanceof Date ? r.recorded_at : new Date(0),
      restoredFrom: r.restored_from_id,
    }));
  }
}

/** FACT_COLUMNS qualified with a table alias. */
function prefixed(alias: string): string {
  return FACT_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');
}
