import type { CitedTurn } from '../domain/fact.js';
import type { Receipt } from '../domain/receipt.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** The reads the gate makes over the turn record. */
export class GateTurnSql {
  constructor(private readonly db: SqlExecutor) {}

  /** The turn a proposal cites, by its seq in the subject's session; null when absent. */
  cited(subjectId: string, sessionId: string, seq: number): Promise<CitedTurn | null> {
    return guard('reading a cited turn', async () => {
      const { rows } = await this.db.query<{
        id: string;
        seq: number;
        session_id: string;
        role: CitedTurn['role'];
        content: string;
        corrective: boolean;
        receipt_kind: Receipt['kind'] | null;
        receipt_tools: string[] | null;
        recorded_at: Date;
        forgotten: boolean;
      }>(
        `SELECT id, seq, session_id, role, content, corrective, receipt_kind, receipt_tools, recorded_at,
                forget_id IS NOT NULL AS forgotten
         FROM turns WHERE subject_id = $1 AND session_id = $2 AND seq = $3`,
        [subjectId, sessionId, seq],
      );
      const r = rows[0];
      if (r === undefined) return null;
      return {
        id: r.id,
        seq: r.seq,
        sessionId: r.session_id,
        role: r.role,
        content: r.content,
        corrective: r.corrective,
        receiptTools: r.receipt_kind === 'tools' ? (r.receipt_tools ?? []) : [],
        recordedAt: r.recorded_at,
        ...(r.forgotten ? { forgotten: true } : {}),
      };
    });
  }

  /**
   * Contents of this subject's turns recorded before the cited one that mention any of the
   * referent tokens (a coarse SQL filter; the gate rule decides what counts as a mention). The
   * agent's own replies are left out: echoing a topic ("I have no record of the vendor
   * contract") is not a record of having discussed it.
   */
  earlierMentions(
    subjectId: string,
    cited: CitedTurn,
    tokens: readonly string[],
  ): Promise<string[]> {
    return guard('searching earlier turns', async () => {
      const patterns = tokens.map((t) => `%${t.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      const { rows } = await this.db.query<{ content: string }>(
        `SELECT content FROM turns
         WHERE subject_id = $1 AND role <> 'assistant'
           AND (recorded_at < $2 OR (session_id = $3 AND seq < $4))
           AND content ILIKE ANY ($5::text[])
         ORDER BY recorded_at DESC LIMIT 200`,
        [subjectId, cited.recordedAt, cited.sessionId, cited.seq, patterns],
      );
      return rows.map((r) => r.content);
    });
  }
}
