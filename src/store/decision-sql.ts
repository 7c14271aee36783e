import type { DecisionLink, LinkKind } from '../domain/decision-chain.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

export interface DecisionDbRow {
  subject_id: string;
  seq: number;
  proposal_id: string;
  content_hash: string;
  decision: LinkKind;
  decided_at: string;
  note: string;
  key_id: string;
  prev_hash: string;
  hash: string;
  signature: string;
  format: number;
}

export function toLink(r: DecisionDbRow): DecisionLink {
  return {
    subjectId: r.subject_id,
    seq: r.seq,
    proposalId: r.proposal_id,
    contentHash: r.content_hash,
    decision: r.decision,
    decidedAt: r.decided_at,
    note: r.note,
    keyId: r.key_id,
    prevHash: r.prev_hash,
    hash: r.hash,
    signature: r.signature,
    format: r.format === 2 ? 2 : 1,
  };
}

/** The `decisions` columns `toLink` reads. */
export const decisionColumns = `subject_id, seq, proposal_id, content_hash, decision, decided_at,
  note, key_id, prev_hash, hash, signature, format`;

/** Serialises appends to one subject's chain across processes (both engines). */
export async function lockChain(db: SqlExecutor, subjectId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('memledger.chain:' || $1))`, [subjectId]);
}

/** The owner-decision chain's links, appended once and read in order (the `decisions` table). */
export class DecisionSql {
  constructor(private readonly db: SqlExecutor) {}

  chain(subjectId: string): Promise<DecisionLink[]> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<DecisionDbRow>(
        `SELECT ${decisionColumns} FROM decisions WHERE subject_id = $1 ORDER BY seq`,
        [subjectId],
      );
      return rows.map(toLink);
    });
  }

  append(link: DecisionLink): Promise<void> {
    return guard('appending a decision', async () => {
      await this.db.query(
        `INSERT INTO decisions (subject_id, seq, proposal_id, content_hash, decision, decided_at, note,
                                key_id, prev_hash, hash, signature, format)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          link.subjectId,
          link.seq,
          link.proposalId,
          link.contentHash,
          link.decision,
          link.decidedAt,
          link.note,
          link.keyId,
          link.prevHash,
          link.hash,
          link.signature,
          link.format,
        ],
      );
    });
  }
}
