/**
 * Migration 13: memledger's own reflection (issue 15). A reflection is a utility generation: the
 * model's call is counted in `utility_usage` with its tokens and never recorded as a turn.
 *
 * - `reflections`: one row per run that reached the gate, with the prompt version (a hash of
 *   the prompt template), the provider and model, the turns shown, the counts and the tokens. A
 *   run that proposed nothing is a row too: it is an outcome, not an absence.
 * - `reflection_items`: each proposal of a run, in the model's order, pointing at what the gate
 *   made of it: a fact (the pile, then wherever the owner sends it) or a dropped proposal (its
 *   code). The pile and the dropped log are read per prompt version through these rows.
 * - `utility_usage` counts the kinds `reflection` and `summary`, and tokens in and out.
 *
 * All three are append-only (reflections and items are never changed once written). Keys begin
 * with the subject (docs/SCALE.md).
 */
export const sql = `
CREATE TABLE reflections (
  subject_id      text NOT NULL,
  id              text NOT NULL,
  session_id      text NOT NULL,
  prompt_version  text NOT NULL,
  provider        text NOT NULL,
  model           text NOT NULL,
  from_seq        integer NOT NULL CHECK (from_seq >= 1),
  to_seq          integer NOT NULL CHECK (to_seq >= from_seq),
  proposed        integer NOT NULL CHECK (proposed >= 0),
  dropped         integer NOT NULL CHECK (dropped >= 0),
  input_tokens    bigint NOT NULL CHECK (input_tokens >= 0),
  output_tokens   bigint NOT NULL CHECK (output_tokens >= 0),
  duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id),
  FOREIGN KEY (subject_id, session_id) REFERENCES sessions (subject_id, id)
);

CREATE INDEX reflections_by_time ON reflections (subject_id, created_at);

CREATE TABLE reflection_items (
  subject_id     text NOT NULL,
  reflection_id  text NOT NULL,
  position       integer NOT NULL CHECK (position >= 1),
  fact_id        text,
  dropped_id     text,
  PRIMARY KEY (subject_id, reflection_id, position),
  FOREIGN KEY (subject_id, reflection_id) REFERENCES reflections (subject_id, id),
  FOREIGN KEY (subject_id, fact_id) REFERENCES facts (subject_id, id),
  FOREIGN KEY (subject_id, dropped_id) REFERENCES dropped_proposals (subject_id, id),
  CHECK ((fact_id IS NULL) <> (dropped_id IS NULL))
);

CREATE TRIGGER reflections_append_only BEFORE UPDATE OR DELETE ON reflections
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER reflection_items_append_only BEFORE UPDATE OR DELETE ON reflection_items
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();

ALTER TABLE utility_usage DROP CONSTRAINT utility_usage_kind_check;
ALTER TABLE utility_usage
  ADD CONSTRAINT utility_usage_kind_check
    CHECK (kind IN ('title', 'insight', 'utility', 'reflection', 'summary')),
  ADD COLUMN input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  ADD COLUMN output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0);
`;
