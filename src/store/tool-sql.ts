import type { RegisteredTool, ToolRegistration } from '../domain/tool.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** The names of the tools bound on a surface ($1 subject, $2 surface), in name order. */
export const BOUND_TOOLS_SQL =
  'SELECT name FROM tools WHERE subject_id = $1 AND $2 = ANY (surfaces) ORDER BY name';

/** The tool registry: the single source of truth for which tools a surface binds. */
export class ToolSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Registers a tool, or replaces its description and surfaces. */
  register(subjectId: string, t: ToolRegistration, at: Date): Promise<void> {
    return guard('registering a tool', async () => {
      await this.db.query(
        `INSERT INTO tools (subject_id, name, description, surfaces, registered_at) VALUES ($1, $2, $3, $4::text[], $5)
         ON CONFLICT (subject_id, name) DO UPDATE SET description = EXCLUDED.description, surfaces = EXCLUDED.surfaces`,
        [subjectId, t.name, t.description, t.surfaces, at],
      );
    });
  }

  /** Removes a tool; false when the subject had none by that name. */
  remove(subjectId: string, name: string): Promise<boolean> {
    return guard('removing a tool', async () => {
      const { rows } = await this.db.query<{ name: string }>(
        'DELETE FROM tools WHERE subject_id = $1 AND name = $2 RETURNING name',
        [subjectId, name],
      );
      return rows.length === 1;
    });
  }

  /** The subject's tools, by name. */
  list(subjectId: string): Promise<RegisteredTool[]> {
    return guard('listing tools', async () => {
      const { rows } = await this.db.query<{
        name: string;
        description: string;
        surfaces: string[];
        registered_at: Date;
      }>(
        'SELECT name, description, surfaces, registered_at FROM tools WHERE subject_id = $1 ORDER BY name',
        [subjectId],
      );
      return rows.map((r) => ({
        name: r.name,
        description: r.description,
        surfaces: r.surfaces,
        registeredAt: r.registered_at,
      }));
    });
  }

  /** The tools that declare `surface`, by name. */
  toolsFor(subjectId: string, surface: string): Promise<string[]> {
    return guard('binding tools', async () => {
      const { rows } = await this.db.query<{ name: string }>(BOUND_TOOLS_SQL, [subjectId, surface]);
      return rows.map((r) => r.name);
    });
  }
}
