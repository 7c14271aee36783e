import type { SlotDeclaration, SlotRule } from '../domain/fact.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** Each subject's slot declarations: which rule checks a slot's proposals. */
export class SlotSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Declares or redeclares a slot; returns whether it was new. */
  declare(subjectId: string, slot: SlotDeclaration, at: Date): Promise<boolean> {
    return guard('declaring a slot', async () => {
      const { rows } = await this.db.query<{ inserted: boolean }>(
        `INSERT INTO slots (subject_id, name, rule, auto_live, declared_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (subject_id, name) DO UPDATE SET rule = EXCLUDED.rule, auto_live = EXCLUDED.auto_live
         RETURNING (xmax = 0) AS inserted`,
        [subjectId, slot.name, slot.rule, slot.autoLive, at],
      );
      return rows[0]?.inserted === true;
    });
  }

  list(subjectId: string): Promise<Array<SlotDeclaration & { declaredAt: Date }>> {
    return guard('reading slots', async () => {
      const { rows } = await this.db.query<{
        name: string;
        rule: SlotRule;
        auto_live: boolean;
        declared_at: Date;
      }>(
        'SELECT name, rule, auto_live, declared_at FROM slots WHERE subject_id = $1 ORDER BY name',
        [subjectId],
      );
      return rows.map((r) => ({
        name: r.name,
        rule: r.rule,
        autoLive: r.auto_live,
        declaredAt: r.declared_at,
      }));
    });
  }
}
