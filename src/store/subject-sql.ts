import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

export interface SubjectRow {
  id: string;
  createdAt: Date;
}

export class SubjectSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Creates the subject if it is new; returns whether it was created. */
  ensure(id: string, at: Date): Promise<boolean> {
    return guard('creating a subject', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        'INSERT INTO subjects (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
        [id, at],
      );
      return rows.length === 1;
    });
  }

  get(id: string): Promise<SubjectRow | null> {
    return guard('reading a subject', async () => {
      const { rows } = await this.db.query<{ id: string; created_at: Date }>(
        'SELECT id, created_at FROM subjects WHERE id = $1',
        [id],
      );
      const row = rows[0];
      return row === undefined ? null : { id: row.id, createdAt: row.created_at };
    });
  }
}
