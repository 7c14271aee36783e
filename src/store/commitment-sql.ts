import type { Commitment, CommitmentStatus } from '../domain/commitment.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

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

/** Commitments, each read and closed within its subject only. */
export class CommitmentSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Adds an open commitment. */
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

  /** Closes an open commitment of the subject; null when it has none open by that id. */
  close(
    subjectId: string,
    id: string,
    status: 'done' | 'dropped',
    at: Date,
  ): Promise<Commitment | null> {
    return guard('closing a commitment', async () => {
      const { rows } = await this.db.query<Row>(
        `UPDATE commitments SET status = $3, status_at = $4
         WHERE subject_id = $1 AND id = $2 AND status = 'open'
         RETURNING ${COLUMNS}`,
        [subjectId, id, status, at],
      );
      return rows[0] === undefined ? null : toCommitment(rows[0]);
    });
  }

  /** The subject's commitment by id; another subject's reads as none. */
  get(subjectId: string, id: string): Promise<Commitment | null> {
    return guard('reading a commitment', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM commitments WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toCommitment(rows[0]);
    });
  }

  /** The subject's commitments, newest first, optionally of one status. */
  list(
    subjectId: string,
    status: CommitmentStatus | null,
    page: { limit: number; offset: number },
  ): Promise<Commitment[]> {
    return guard('listing commitments', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM commitments WHERE subject_id = $1 AND ($2::text IS NULL OR status = $2)
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
        [subjectId, status, page.limit, page.offset],
      );
      return rows.map(toCommitment);
    });
  }
}
