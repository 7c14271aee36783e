import { INDEX_TURN_FUNCTION_V2_SQL } from '../recall-index-sql.js';

/**
 * Migration 15: per-session term sums for recall (issue 15, the arrival's `relevant` block).
 * When even a query's rarest term is too common to read turn by turn, recall chooses candidate
 * sessions from each session's total count of the term. It summed the term's postings on every
 * query; `session_terms` keeps the sums, written by the index trigger on every turn insert
 * (replaced here) and filled from the postings for the turns already indexed. Keys begin with the
 * subject (docs/SCALE.md).
 */
export const sql = `
CREATE TABLE session_terms (
  subject_id  text NOT NULL,
  term        text NOT NULL,
  session_id  text NOT NULL,
  tf          integer NOT NULL CHECK (tf >= 1),
  -- a term's sums are read by an index-only scan, as its postings are
  PRIMARY KEY (subject_id, term, session_id) INCLUDE (tf)
);

INSERT INTO session_terms (subject_id, term, session_id, tf)
SELECT subject_id, term, session_id, sum(tf)::int FROM turn_postings
GROUP BY subject_id, term, session_id;

${INDEX_TURN_FUNCTION_V2_SQL}
`;
