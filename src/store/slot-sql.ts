import type { SlotDeclaration, SlotRule, SummaryScope } from '../domain/fact.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** Each subject's slot declarations: which rule checks a slot's proposals. */
export class SlotSql {
  constructor(private readonly db: SqlExecutor) {}

  /**
   * Declares or redeclares a slot (its rule); returns whether it was new. A declaration never
   * delegates: auto-live and its tools change only with `delegate`, after a signed link.
   */
  declare(
    subjectId: string,
    slot: Pick<SlotDeclaration, 'name' | 'rule' | 'scope'>,
    at: Date,
  ): Promise<boolean> {
    return guard('declaring a slot', async () => {
      const { rows } = await this.db.query<{ inserted: boolean }>(
        `INSERT INTO slots (subject_id, name, rule, auto_live, declared_at, summary_scope)
         VALUES ($1, $2, $3, false, $4, $5)
         ON CONFLICT (subject_id, name) DO UPDATE SET rule = EXCLUDED.rule, summary_scope = EXCLUDED.summary_scope
         RETURNING (xmax = 0) AS inserted`,
        [
          subjectId,
          slot.name,
          slot.rule,
          at,
          slot.rule === 'summary' ? (slot.scope ?? 'rolling') : null,
        ],
      );
      return rows[0]?.inserted === true;
    });
  }

  /** Records what a verified delegation link signed for an action slot. */
  delegate(
    subjectId: string,
    name: string,
    autoLive: boolean,
    tools: readonly string[],
  ): Promise<void> {
    return guard('delegating a slot', async () => {
      await this.db.query(
        `UPDATE slots SET auto_live = $3, auto_live_tools = $4::text[]
         WHERE subject_id = $1 AND name = $2 AND rule = 'action'`,
        [subjectId, name, autoLive, tools],
      );
    });
  }

  list(subjectId: string): Promise<Array<SlotDeclaration & { declaredAt: Date }>> {
    return guard('reading slots', async () => {
      const { rows } = await this.db.query<{
        name: string;
        rule: SlotRule;
        auto_live: boolean;
        auto_live_tools: string[];
        declared_at: Date;
        summary_scope: SummaryScope | null;
      }>(
        'SELECT name, rule, auto_live, auto_live_tools, declared_at, summary_scope FROM slots WHERE subject_id = $1 ORDER BY name',
        [subjectId],
      );
      return rows.map((r) => ({
        name: r.name,
        rule: r.rule,
        autoLive: r.auto_live,
        tools: r.auto_live_tools,
        declaredAt: r.declared_at,
        ...(r.summary_scope === null ? {} : { scope: r.summary_scope }),
      }));
    });
  }
}
