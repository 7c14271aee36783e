import { EngineError } from '../domain/errors.js';
import type { Session } from '../domain/session.js';
import type { SqlExecutor } from './sql-client.js';
import { guard, pgErrorCode } from './store-error.js';

interface SessionDbRow {
  id: string;
  subject_id: string;
  title: string | null;
  last_seq: number;
  created_at: Date;
}

const COLUMNS = 'id, subject_id, title, last_seq, created_at';

function toSession(row: SessionDbRow): Session {
  return {
    id: row.id,
    subjectId: row.subject_id,
    title: row.title,
    turnCount: row.last_seq,
    createdAt: row.created_at,
  };
}

/** Sessions: created under an existing subject, numbered turns counted in `last_seq`. */
export class SessionSql {
  constructor(private readonly db: SqlExecutor) {}

  create(input: {
    id: string;
    subjectId: string;
    title: string | null;
    at: Date;
  }): Promise<Session> {
    return guard('creating a session', async () => {
      try {
        const { rows } = await this.db.query<SessionDbRow>(
          `INSERT INTO sessions (subject_id, id, title, created_at)
           SELECT id, $2, $3, $4 FROM subjects WHERE id = $1
           RETURNING ${COLUMNS}`,
          [input.subjectId, input.id, input.title, input.at],
        );
        const row = rows[0];
        if (row === undefined) {
          throw new EngineError('SUBJECT_NOT_FOUND', `subject "${input.subjectId}" does not exist`);
        }
        return toSession(row);
      } catch (err) {
        // the primary key (subject_id, id): only this subject's own session of that id collides
        if (pgErrorCode(err) === '23505') {
          throw new EngineError('SESSION_EXISTS', `a session "${input.id}" already exists`);
        }
        throw err;
      }
    });
  }

  /** A session of this subject; another subject's session reads as absent. */
  ofSubject(subjectId: string, id: string): Promise<Session | null> {
    return guard('reading a session', async () => {
      const { rows } = await this.db.query<SessionDbRow>(
        `SELECT ${COLUMNS} FROM sessions WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      const row = rows[0];
      return row === undefined ? null : toSession(row);
    });
  }

  list(subjectId: string, page: { limit: number; offset: number }): Promise<Session[]> {
    return guard('listing sessions', async () => {
      const { rows } = await this.db.query<SessionDbRow>(
        `SELECT ${COLUMNS} FROM sessions WHERE subject_id = $1
         ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [subjectId, page.limit, page.offset],
      );
      return rows.map(toSession);
    });
  }
}
