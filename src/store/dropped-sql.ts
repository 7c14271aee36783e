import type { DroppedProposal } from '../domain/dropped-proposal.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface DroppedDbRow {
  id: string;
  session_id: string | null;
  slot: string;
  text: string;
  proposal: unknown;
  code: string;
  reason: string;
  proposed_by: string;
  dropped_at: Date;
}

/** The gate's log of dropped proposals (append-only). */
export class DroppedSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(subjectId: string, d: DroppedProposal): Promise<void> {
    return guard('logging a dropped proposal', async () => {
      await this.db.query(
        `INSERT INTO dropped_proposals
           (subject_id, id, session_id, slot, text, proposal, code, reason, proposed_by, dropped_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)`,
        [
          subjectId,
          d.id,
          d.sessionId,
          d.slot,
          d.text,
          JSON.stringify(d.proposal),
          d.code,
          d.reason,
          d.proposedBy,
          d.droppedAt,
        ],
      );
    });
  }

  list(subjectId: string, limit: number): Promise<DroppedProposal[]> {
    return guard('reading the dropped log', async () => {
      const { rows } = await this.db.query<DroppedDbRow>(
        `SELECT id, session_id, slot, text, proposal, code, reason, proposed_by, dropped_at
         FROM dropped_proposals WHERE subject_id = $1 ORDER BY dropped_at DESC, id LIMIT $2`,
        [subjectId, limit],
      );
      return rows.map((r) => ({
        id: r.id,
        sessionId: r.session_id,
        slot: r.slot,
        text: r.text,
        proposal: r.proposal,
        code: r.code,
        reason: r.reason,
        proposedBy: r.proposed_by,
        droppedAt: r.dropped_at,
      }));
    });
  }
}
