import type { ServerSnapshot } from '../domain/trust.js';

/**
 * Which run of the server this is: when it started, and when its shared statistics were last
 * reset. A crash restart keeps the postmaster and its start time, but resets the statistics, and
 * may hand out again the ids of transactions the crash lost; either changing means nothing kept
 * holds. (Functions named with their schema: a search_path cannot put others in their place.)
 */
export const SERVER_RUN = `(extract(epoch FROM pg_catalog.pg_postmaster_start_time())::text || '/' ||
      coalesce((SELECT extract(epoch FROM stats_reset)::text FROM pg_catalog.pg_stat_bgwriter), ''))`;

/**
 * The columns of a ServerSnapshot, for any statement to carry (TrustSql.snapshot reads them on
 * their own; arrival's opening read carries them, so an arrival's trust view sends no statement
 * to learn that nothing changed).
 */
export const SERVER_SNAPSHOT_COLUMNS = `pg_catalog.pg_current_snapshot()::text AS snapshot,
  ${SERVER_RUN} AS started, pg_catalog.pg_is_in_recovery() AS recovery`;

/** The ServerSnapshot of a row holding SERVER_SNAPSHOT_COLUMNS (none: a standby's, never kept). */
export function serverSnapshotOf(row: Partial<ServerSnapshot> | undefined): ServerSnapshot {
  return row === undefined ||
    typeof row.snapshot !== 'string' ||
    typeof row.started !== 'string' ||
    typeof row.recovery !== 'boolean'
    ? { snapshot: '', started: '', recovery: true }
    : { snapshot: row.snapshot, started: row.started, recovery: row.recovery };
}
