import type { ActionRecord, ActionStatus } from '../domain/action.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface Row {
  id: string;
  subject_id: string;
  tool: string;
  surface: string;
  target_summary: string;
  status: ActionStatus;
  completed_at: Date | null;
  recorded_at: Date;
}

/** The actions the host records. */
export class ActionSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Records one action and returns it as stored. */
  record(a: Omit<ActionRecord, 'recordedAt'> & { at: Date }): Promise<ActionRecord> {
    return guard('recording an action', async () => {
      const { rows } = await this.db.query<Row>(
        `INSERT INTO actions (subject_id, id, tool, surface, target_summary, status, completed_at, recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING id, subject_id, tool, surface, target_summary, status, completed_at, recorded_at`,
        [a.subjectId, a.id, a.tool, a.surface, a.target, a.status, a.completedAt, a.at],
      );
      const r = rows[0] as Row;
      return {
        id: r.id,
        subjectId: r.subject_id,
        tool: r.tool,
        surface: r.surface,
        target: r.target_summary,
        status: r.status,
        completedAt: r.completed_at,
        recordedAt: r.recorded_at,
      };
    });
  }
}
