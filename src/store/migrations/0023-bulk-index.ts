import { INDEX_TURN_FUNCTION_V3_SQL } from '../recall-index-sql.js';

/**
 * Migration 23: an import or a restore indexes the turns it writes at once, after writing them,
 * instead of turn by turn in the insert trigger (see INDEX_TURN_FUNCTION_V3_SQL). The trigger steps
 * aside only in a transaction that sets `memledger.bulk_index` locally, as the append-only
 * triggers do for `memledger.forgetting`; every other insert is indexed as before.
 */
export const sql = INDEX_TURN_FUNCTION_V3_SQL;
