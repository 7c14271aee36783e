import { analyze } from '../../domain/text/analyze.js';
import { INDEX_TURN_FUNCTION_SQL } from '../recall-index-sql.js';
import type { SqlExecutor } from '../sql-client.js';

/**
 * Recall's lexical index, kept up to date on write: every turn's analysed terms (computed by the
 * engine, so both engines rank identically), its postings, per-term document counts, and each
 * session's length in terms. Facts carry their terms too.
 */
export const sql = `
-- Who spoke, for conversations with more than one person per role (OpenAI's "name").
ALTER TABLE turns ADD COLUMN speaker text CHECK (speaker IS NULL OR btrim(speaker) <> '');
-- The analysed terms of speaker and content (src/recall/analyze.ts), in order, with repeats.
ALTER TABLE turns ADD COLUMN terms text[];
ALTER TABLE facts ADD COLUMN terms text[];
-- Sum of the session's turns' term counts; with last_seq it gives the corpus statistics.
ALTER TABLE sessions ADD COLUMN term_len bigint NOT NULL DEFAULT 0 CHECK (term_len >= 0);

CREATE TABLE turn_postings (
  subject_id  text NOT NULL,
  term        text NOT NULL,
  session_id  text NOT NULL,
  seq         integer NOT NULL,
  tf          integer NOT NULL CHECK (tf >= 1),
  len         integer NOT NULL CHECK (len >= 1),
  -- tf and len ride in the index: a term's postings are read by an index-only scan, not from
  -- heap pages scattered in the order turns arrived
  PRIMARY KEY (subject_id, term, session_id, seq) INCLUDE (tf, len)
);

CREATE TABLE term_stats (
  subject_id  text NOT NULL,
  term        text NOT NULL,
  df          integer NOT NULL CHECK (df >= 1),
  sdf         integer NOT NULL CHECK (sdf >= 1 AND sdf <= df),
  PRIMARY KEY (subject_id, term)
);

-- Per-subject corpus totals: indexed turns, sessions holding one, and their summed length.
CREATE TABLE recall_corpus (
  subject_id  text PRIMARY KEY,
  turns       bigint NOT NULL CHECK (turns >= 0),
  sessions    integer NOT NULL CHECK (sessions >= 0),
  term_len    bigint NOT NULL CHECK (term_len >= 0)
);

${INDEX_TURN_FUNCTION_SQL}
CREATE TRIGGER turns_index AFTER INSERT ON turns
  FOR EACH ROW EXECUTE FUNCTION memledger_index_turn();

CREATE INDEX facts_terms ON facts USING gin (terms);

-- The fact guard again, with the terms written once (the backfill below fills them in).
CREATE OR REPLACE FUNCTION memledger_fact_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'memledger: facts are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.subject_id, NEW.id, NEW.slot, NEW.key, NEW.text, NEW.origin, NEW.attested,
      NEW.evidence_turn_id, NEW.evidence_session_id, NEW.evidence_seq, NEW.evidence_quote,
      NEW.evidence_tool, NEW.proposed_by, NEW.valid_from, NEW.recorded_at)
     IS DISTINCT FROM
     (OLD.subject_id, OLD.id, OLD.slot, OLD.key, OLD.text, OLD.origin, OLD.attested,
      OLD.evidence_turn_id, OLD.evidence_session_id, OLD.evidence_seq, OLD.evidence_quote,
      OLD.evidence_tool, OLD.proposed_by, OLD.valid_from, OLD.recorded_at) THEN
    RAISE EXCEPTION 'memledger: a fact''s content and evidence are immutable' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.terms IS NOT NULL AND NEW.terms IS DISTINCT FROM OLD.terms THEN
    RAISE EXCEPTION 'memledger: a fact''s terms are written once' USING ERRCODE = 'P0001';
  END IF;
  -- lineage links and the promotion are written once
  IF OLD.promoted_by IS NOT NULL AND NEW.promoted_by IS DISTINCT FROM OLD.promoted_by THEN
    RAISE EXCEPTION 'memledger: a fact''s promotion is written once' USING ERRCODE = 'P0001';
  END IF;
  IF (OLD.supersedes_id IS NOT NULL AND NEW.supersedes_id IS DISTINCT FROM OLD.supersedes_id)
     OR (OLD.superseded_by_id IS NOT NULL AND NEW.superseded_by_id IS DISTINCT FROM OLD.superseded_by_id) THEN
    RAISE EXCEPTION 'memledger: a fact''s lineage is written once' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
`;

/**
 * Turns and facts written before this migration get their terms here, in the migration's
 * transaction. Turns are append-only, so their guard is lifted for exactly this update. The
 * index trigger fires only on insert, so the backfill replays it: copies of the turns, in
 * order, go into a temporary table that carries the same trigger function.
 */
export async function backfill(tx: SqlExecutor): Promise<void> {
  const { rows: turns } = await tx.query<{
    subject_id: string;
    session_id: string;
    seq: number;
    content: string;
  }>(
    `SELECT subject_id, session_id, seq, content FROM turns WHERE terms IS NULL
     ORDER BY subject_id, session_id, seq`,
  );
  if (turns.length > 0) {
    await tx.exec('ALTER TABLE turns DISABLE TRIGGER turns_append_only');
    await tx.exec(
      `CREATE TEMP TABLE memledger_backfill (LIKE turns INCLUDING DEFAULTS) ON COMMIT DROP`,
    );
    for (const t of turns) {
      await tx.query(
        `UPDATE turns SET terms = $4 WHERE subject_id = $1 AND session_id = $2 AND seq = $3`,
        [t.subject_id, t.session_id, t.seq, analyze(t.content)],
      );
    }
    await tx.exec(`CREATE TRIGGER memledger_backfill_index AFTER INSERT ON memledger_backfill
      FOR EACH ROW EXECUTE FUNCTION memledger_index_turn()`);
    await tx.exec(
      `INSERT INTO memledger_backfill SELECT * FROM turns ORDER BY subject_id, session_id, seq`,
    );
    await tx.exec('ALTER TABLE turns ENABLE TRIGGER turns_append_only');
    await tx.exec(`UPDATE sessions s SET term_len = coalesce(
      (SELECT sum(cardinality(t.terms)) FROM turns t WHERE t.session_id = s.id), 0)`);
  }
  const { rows: facts } = await tx.query<{ subject_id: string; id: string; text: string }>(
    'SELECT subject_id, id, text FROM facts WHERE terms IS NULL ORDER BY subject_id, id',
  );
  for (const f of facts) {
    await tx.query('UPDATE facts SET terms = $3 WHERE subject_id = $1 AND id = $2', [
      f.subject_id,
      f.id,
      analyze(f.text),
    ]);
  }
}
