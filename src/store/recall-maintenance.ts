import type { Turn } from '../domain/turn.js';
import type { SqlClient } from './sql-client.js';

/** An engine without autovacuum vacuums the recall index every this many turns of a subject… */
const VACUUM_EVERY = 256;
/** …and refreshes the planner's statistics every this many. */
const ANALYZE_EVERY = 2048;

/**
 * Does for the recall index what autovacuum would where there is none (PGlite): VACUUM keeps
 * its pages all-visible, so postings are read by index-only scans, and ANALYZE gives the planner
 * statistics (without them it scans every fact instead of using the terms index). Scheduled by
 * the subject's turn count, so short-lived CLI processes share the work with long-lived ones;
 * VACUUM only visits pages changed since the last one.
 */
export function recallMaintenance(
  client: SqlClient,
): (turn: Turn, indexed: number) => Promise<void> {
  return async (_turn, indexed) => {
    if (indexed % ANALYZE_EVERY === 0) {
      await client.exec(
        'VACUUM ANALYZE turn_postings, term_stats, session_terms, recall_corpus, facts',
      );
    } else if (indexed % VACUUM_EVERY === 0) {
      await client.exec('VACUUM turn_postings, term_stats, session_terms, recall_corpus');
    }
  };
}
