import type { UtilityKind } from '../domain/utility.js';
import type { UtilityUsage } from '../domain/utility-usage.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** Per-session counts of utility generations, which never enter the transcript. */
export class UsageSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Counts one utility request; returns null when the subject has no such session. */
  count(
    subjectId: string,
    sessionId: string,
    kind: UtilityKind,
    chars: number,
    at: Date,
  ): Promise<number | null> {
    return guard('counting a utility request', async () => {
      const { rows } = await this.db.query<{ requests: number }>(
        `INSERT INTO utility_usage (subject_id, session_id, kind, requests, chars, first_at, last_at)
         SELECT subject_id, id, $3, 1, $4, $5, $5 FROM sessions WHERE subject_id = $1 AND id = $2
         ON CONFLICT (subject_id, session_id, kind) DO UPDATE
           SET requests = utility_usage.requests + 1,
               chars = utility_usage.chars + EXCLUDED.chars,
               last_at = EXCLUDED.last_at
         RETURNING requests`,
        [subjectId, sessionId, kind, chars, at],
      );
      return rows[0]?.requests ?? null;
    });
  }

  /**
   * Counts one of memledger's own model calls (a reflection, a summary) with the tokens the
   * provider counted; returns null when the subject has no such session. A host's utility
   * request (`count`) has no tokens to count.
   */
  countCall(
    subjectId: string,
    sessionId: string,
    kind: UtilityKind,
    chars: number,
    at: Date,
    tokens: { input: number; output: number },
  ): Promise<number | null> {
    return guard('counting a model call', async () => {
      const { rows } = await this.db.query<{ requests: number }>(
        `INSERT INTO utility_usage
           (subject_id, session_id, kind, requests, chars, input_tokens, output_tokens, first_at, last_at)
         SELECT subject_id, id, $3, 1, $4, $6, $7, $5, $5
         FROM sessions WHERE subject_id = $1 AND id = $2
         ON CONFLICT (subject_id, session_id, kind) DO UPDATE
           SET requests = utility_usage.requests + 1,
               chars = utility_usage.chars + EXCLUDED.chars,
               input_tokens = utility_usage.input_tokens + EXCLUDED.input_tokens,
               output_tokens = utility_usage.output_tokens + EXCLUDED.output_tokens,
               last_at = EXCLUDED.last_at
         RETURNING requests`,
        [subjectId, sessionId, kind, chars, at, tokens.input, tokens.output],
      );
      return rows[0]?.requests ?? null;
    });
  }

  bySession(subjectId: string, sessionId: string): Promise<UtilityUsage[]> {
    return guard('reading utility usage', async () => {
      const { rows } = await this.db.query<{
        kind: UtilityKind;
        requests: number;
        chars: string | number;
        input_tokens: string | number;
        output_tokens: string | number;
        first_at: Date;
        last_at: Date;
      }>(
        `SELECT kind, requests, chars, input_tokens, output_tokens, first_at, last_at FROM utility_usage
         WHERE subject_id = $1 AND session_id = $2 ORDER BY kind`,
        [subjectId, sessionId],
      );
      return rows.map((r) => ({
        kind: r.kind,
        requests: r.requests,
        chars: Number(r.chars),
        inputTokens: Number(r.input_tokens),
        outputTokens: Number(r.output_tokens),
        firstAt: r.first_at,
        lastAt: r.last_at,
      }));
    });
  }
}
