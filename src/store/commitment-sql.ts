import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

export const COMMITMENT_STATUSES = ['open', 'done', 'dropped'] as const;
export type CommitmentStatus = (typeof COMMITMENT_STATUSES)[number];

export interface Commitment {
  id: string;
  subjectId: string;
  title: string;
  /** The due DATE as written, YYYY-MM-DD (formatted by SQL, never through a JS Date). */
  due: string | null;
  status: CommitmentStatus;
  createdAt: Date;
  statusAt: Date;
}

interface Row {
  id: string;
  subject_id: string;
  title: string;
  due: string | null;
  status: CommitmentStatus;
  created_at: Date;
  status_at: Date;
}

const COLUMNS = `id, subject_id, title, to_char(due_date, 'YYYY-MM-DD') AS due, status, created_at, status_at`;

const toCommitment = (r: Row): Commitment => ({
  id: r.id,
  subjectId: r.subject_id,
  title: r.title,
  due: r.due,
  status: r.status,
  createdAt: r.created_at,
  statusAt: r.status_at,
});

export class CommitmentSql {
  constructor(private readonly db: SqlExecutor) {}

  add(c: {
    id: string;
    subjectId: string;
    title: string;
    due: string | null;
    at: Date;
  }): Promise<Commitment> {
    return guard('adding a commitment', async () => {
      const { rows } = await this.db.query<Row>(
        `INSERT INTO commitments (subject_id, id, title, due_date, status, created_at, status_at)
         VALUES ($1, $2, $3, $4::date, 'open', $5, $5) RETURNING ${COLUMNS}`,
        [c.subjectId, c.id, c.title, c.due, c.at],
      );
      return toCommitment(rows[0] as Row);
    });
  }

  /** Closes an open commitment; null when it does not exist or is not open. */
  close(id: string, status: 'done' | 'dropped', at: Date): Promise<Commitment | null> {
    return guard('closing a commitment', async () => {
      const { rows } = await this.db.query<Row>(
        `UPDATE commitments SET status = $2, status_at = $3 WHERE id = $1 AND status = 'open'
         RETURNING ${COLUMNS}`,
        [id, status, at],
      );
      return rows[0] === undefined ? null : toCommitment(rows[0]);
    });
  }

  get(id: string): Promise<Commitment | null> {
    return guard('reading a commitment', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM commitments WHERE id = $1`,
        [id],
      );
      return rows[0] === undefined ? null : toCommitment(rows[0]);
    });
  }

  list(subjectId: string, status: CommitmentStatus | null, limit: number): Promise<Commitment[]> {
    return guard('listing commitments', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM commitments WHERE subject_id = $1 AND ($2::text IS NULL OR status = $2)
         ORDER BY created_at DESC, id DESC LIMIT $3`,
        [subjectId, status, limit],
      );
      return rows.map(toCommitment);
    });
  }
}
