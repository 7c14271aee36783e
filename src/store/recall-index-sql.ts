/**
 * The recall index's writer: the trigger function that runs after every turn insert (created by
 * migration 0006 and replaced by migration 0015, whose checksums cover these texts: never edit
 * them, add a migration instead).
 * It lives here, with the engine's SQL, because it is the code that writes `turn_postings`,
 * `term_stats` and `recall_corpus`; each statement is its own constant so the schema checks in
 * test/regressions/inert-state.test.ts read them like any other SQL of the engine.
 */

/** The turn's postings: one row per distinct term, with its count and the turn's length. */
const INSERT_POSTINGS = `INSERT INTO turn_postings (subject_id, term, session_id, seq, tf, len)
    SELECT NEW.subject_id, term, NEW.session_id, NEW.seq, count(*), cardinality(NEW.terms)
    FROM unnest(NEW.terms) AS term GROUP BY term`;

/**
 * Term statistics, in term order so concurrent writers lock rows in the same order. A term is
 * new to the session when no earlier turn of the session holds it.
 */
const UPSERT_TERM_STATS = `INSERT INTO term_stats AS s (subject_id, term, df, sdf)
    SELECT NEW.subject_id, term, 1, 1 FROM (SELECT DISTINCT unnest(NEW.terms) AS term) d
    ORDER BY term
    ON CONFLICT (subject_id, term) DO UPDATE
      SET df = s.df + 1,
          sdf = s.sdf + CASE WHEN EXISTS (
                  SELECT 1 FROM turn_postings p
                  WHERE p.subject_id = NEW.subject_id AND p.term = EXCLUDED.term
                    AND p.session_id = NEW.session_id AND p.seq < NEW.seq) THEN 0 ELSE 1 END`;

/** The subject's totals; a turn with no terms left (all stopwords) is a document of length 0. */
const UPSERT_CORPUS = `INSERT INTO recall_corpus AS c (subject_id, turns, sessions, term_len)
  VALUES (NEW.subject_id, 1, 1, cardinality(NEW.terms))
  ON CONFLICT (subject_id) DO UPDATE
    SET turns = c.turns + 1,
        sessions = c.sessions + CASE WHEN EXISTS (
                     SELECT 1 FROM turns t
                     WHERE t.subject_id = NEW.subject_id AND t.session_id = NEW.session_id
                       AND t.seq < NEW.seq AND t.terms IS NOT NULL) THEN 0 ELSE 1 END,
        term_len = c.term_len + cardinality(NEW.terms)`;

/** `memledger_index_turn()`: indexes an inserted turn's terms (the `turns_index` trigger). */
export const INDEX_TURN_FUNCTION_SQL = `
CREATE FUNCTION memledger_index_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.terms IS NULL THEN
    RETURN NULL;
  END IF;
  IF cardinality(NEW.terms) > 0 THEN
    ${INSERT_POSTINGS};
    ${UPSERT_TERM_STATS};
  END IF;
  ${UPSERT_CORPUS};
  RETURN NULL;
END;
$$;
`;

/**
 * Each session's count of a term, summed over its turns (migration 0015), in term order like the
 * statistics. Recall picks candidate sessions for a common term from these sums: a term in 10,000
 * turns sits in far fewer sessions, and reading its sums costs a row per session, not a posting
 * per turn.
 */
const UPSERT_SESSION_TERMS = `INSERT INTO session_terms AS s (subject_id, term, session_id, tf)
    SELECT NEW.subject_id, term, NEW.session_id, count(*) FROM unnest(NEW.terms) AS term
    GROUP BY term ORDER BY term
    ON CONFLICT (subject_id, term, session_id) DO UPDATE SET tf = s.tf + EXCLUDED.tf`;

/** `memledger_index_turn()` as migration 0015 replaces it: 0006's, plus the session sums. */
export const INDEX_TURN_FUNCTION_V2_SQL = `
CREATE OR REPLACE FUNCTION memledger_index_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.terms IS NULL THEN
    RETURN NULL;
  END IF;
  IF cardinality(NEW.terms) > 0 THEN
    ${INSERT_POSTINGS};
    ${UPSERT_TERM_STATS};
    ${UPSERT_SESSION_TERMS};
  END IF;
  ${UPSERT_CORPUS};
  RETURN NULL;
END;
$$;
`;

/**
 * `memledger_index_turn()` as migration 0023 replaces it: 0015's, except inside a transaction that
 * sets `memledger.bulk_index` locally (an import or a restore writing whole subjects), which
 * indexes the turns it wrote afterwards in a few set-wise statements (`BULK_INDEX_SQL`): one
 * transaction updating one statistics row per turn keeps every version of that row until it
 * ends, and each update walks them all (an import of 100,000 turns did not finish in 8 minutes).
 */
export const INDEX_TURN_FUNCTION_V3_SQL = `
CREATE OR REPLACE FUNCTION memledger_index_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.terms IS NULL OR current_setting('memledger.bulk_index', true) = 'on' THEN
    RETURN NULL;
  END IF;
  IF cardinality(NEW.terms) > 0 THEN
    ${INSERT_POSTINGS};
    ${UPSERT_TERM_STATS};
    ${UPSERT_SESSION_TERMS};
  END IF;
  ${UPSERT_CORPUS};
  RETURN NULL;
END;
$$;
`;

/**
 * A subject's recall index made from its turns at once, as the insert trigger would have made it
 * turn by turn (the subject had none: an import or a restore wrote its turns with
 * `memledger.bulk_index` on). Postings per turn and term; per term, its turns and sessions; per
 * session and term, the sum; the subject's totals over the turns with terms (a turn of no terms
 * left, a tombstone, is a document of length 0).
 */
export const BULK_INDEX_SQL = [
  `INSERT INTO turn_postings (subject_id, term, session_id, seq, tf, len)
   SELECT t.subject_id, u.term, t.session_id, t.seq, count(*), cardinality(t.terms)
   FROM turns t CROSS JOIN LATERAL unnest(t.terms) AS u(term)
   WHERE t.subject_id = $1
   GROUP BY t.subject_id, u.term, t.session_id, t.seq, cardinality(t.terms)`,
  `INSERT INTO term_stats (subject_id, term, df, sdf)
   SELECT p.subject_id, p.term, count(*), count(DISTINCT p.session_id) FROM turn_postings p
   WHERE p.subject_id = $1 GROUP BY p.subject_id, p.term`,
  `INSERT INTO session_terms (subject_id, term, session_id, tf)
   SELECT p.subject_id, p.term, p.session_id, sum(p.tf) FROM turn_postings p
   WHERE p.subject_id = $1 GROUP BY p.subject_id, p.term, p.session_id`,
  `INSERT INTO recall_corpus (subject_id, turns, sessions, term_len)
   SELECT t.subject_id, count(*), count(DISTINCT t.session_id), sum(cardinality(t.terms))
   FROM turns t WHERE t.subject_id = $1 AND t.terms IS NOT NULL GROUP BY t.subject_id`,
] as const;
