import { ANALYZER_VERSION } from '../../domain/text/analyze.js';
import type { SqlExecutor } from '../sql-client.js';

/**
 * Which analyser built the recall index. Turns' and facts' terms, the postings and the term
 * statistics are all `analyze`'s output, computed when a row was written: an analyser that
 * changes would silently split old postings from new ones, so the store records the version
 * that built them and refuses to open under another (REINDEX_REQUIRED) until a reindex rebuilds
 * them. The version is written by the backfill below and by the reindex, never by this SQL:
 * the checksum covers the SQL, and it must not change when the analyser does.
 */
export const sql = `
-- The analyser version (src/domain/analyze.ts, ANALYZER_VERSION) that built the recall index.
CREATE TABLE recall_index (
  analyzer_version text NOT NULL CHECK (btrim(analyzer_version) <> '')
);
-- exactly one row
CREATE UNIQUE INDEX recall_index_one_row ON recall_index ((true));
`;

/**
 * The analyser version every release before this migration used. A store that had the recall
 * index before this migration was indexed by it, whatever version the code running this
 * migration has: fixed here, never to be changed.
 */
const VERSION_BEFORE_RECORDING = '1';

/**
 * Records the version that built the postings the store holds now: this code's analyser when
 * migration 0006 built the index in this same run or there is nothing indexed yet, the version
 * before recording otherwise.
 */
export async function backfill(
  tx: SqlExecutor,
  run: { readonly applied: readonly number[] },
): Promise<void> {
  const { rows } = await tx.query<{ indexed: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM turns) OR EXISTS (SELECT 1 FROM facts) AS indexed`,
  );
  const builtNow = run.applied.includes(6) || rows[0]?.indexed !== true;
  await tx.query('INSERT INTO recall_index (analyzer_version) VALUES ($1)', [
    builtNow ? ANALYZER_VERSION : VERSION_BEFORE_RECORDING,
  ]);
}
