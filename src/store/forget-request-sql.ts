import type { ForgetRequest, ForgetRequestStatus, ForgetScope } from '../domain/forget.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface Row {
  subject_id: string;
  id: string;
  session_id: string;
  seq: number;
  quote: string;
  scope: ForgetRequest['scope'] | string;
  requested_by: string;
  recorded_at: Date;
  status: ForgetRequestStatus;
  decided_at: Date | null;
  forget_id: string | null;
}

const COLUMNS = `subject_id, id, session_id, seq, quote, scope, requested_by, recorded_at, status,
  decided_at, forget_id`;

function toRequest(r: Row): ForgetRequest {
  return {
    id: r.id,
    subjectId: r.subject_id,
    sessionId: r.session_id,
    turn: r.seq,
    quote: r.quote,
    scope: typeof r.scope === 'string' ? (JSON.parse(r.scope) as ForgetRequest['scope']) : r.scope,
    requestedBy: r.requested_by,
    recordedAt: r.recorded_at,
    status: r.status,
    decidedAt: r.decided_at,
    forgetId: r.forget_id,
  };
}

/** Agents' forget requests: filed, listed, and declined (a forget honours them: ForgetSql). */
export class ForgetRequestSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(r: {
    id: string;
    subjectId: string;
    sessionId: string;
    turn: number;
    quote: string;
    scope: ForgetScope;
    requestedBy: string;
    at: Date;
  }): Promise<ForgetRequest> {
    return guard('recording a forget request', async () => {
      const { rows } = await this.db.query<Row>(
        `INSERT INTO forget_requests (subject_id, id, session_id, seq, quote, scope, requested_by,
           recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING ${COLUMNS}`,
        [
          r.subjectId,
          r.id,
          r.sessionId,
          r.turn,
          r.quote,
          JSON.stringify(r.scope),
          r.requestedBy,
          r.at,
        ],
      );
      return toRequest(rows[0] as Row);
    });
  }

  get(subjectId: string, id: string): Promise<ForgetRequest | null> {
    return guard('reading a forget request', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM forget_requests WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toRequest(rows[0]);
    });
  }

  /** Newest first; only those with `status` when given. */
  list(
    subjectId: string,
    status: ForgetRequestStatus | undefined,
    page: { limit: number; offset: number },
  ): Promise<ForgetRequest[]> {
    return guard('reading forget requests', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM forget_requests
         WHERE subject_id = $1 AND ($2::text IS NULL OR status = $2)
         ORDER BY recorded_at DESC, id LIMIT $3 OFFSET $4`,
        [subjectId, status ?? null, page.limit, page.offset],
      );
      return rows.map(toRequest);
    });
  }

  /** Declines a pending request; false when it is not pending. */
  decline(subjectId: string, id: string, at: Date): Promise<boolean> {
    return guard('declining a forget request', async () => {
      const { rows } = await this.db.query(
        `UPDATE forget_requests SET status = 'declined', decided_at = $3
         WHERE subject_id = $1 AND id = $2 AND status = 'pending' RETURNING id`,
        [subjectId, id, at],
      );
      return rows.length === 1;
    });
  }
}
