/**
 * Migration 14: living summaries (issue 15). A summary aspect is a slot with the rule `summary`
 * and a scope (`rolling`: one summary folded forward session by session; `session`: one per
 * session). `memledger summarize` asks the model for sentences that each cite turns, checks every
 * sentence against the turns it cites, and stores what is supported as one fact of origin
 * `summarized` whose cited turns are part of what the owner signs.
 *
 * - `slots.summary_scope`: the aspect's scope; set exactly when the rule is `summary`.
 * - `facts.evidence_citations`: a summarized fact's cited turns, `[{turn, session, seq, at}]` in
 *   the order the sentences cite them; hashed into the content the owner approves, immutable.
 * - `summaries`: one row per summarize run that reached the check: the aspect, the session, the
 *   previous version it folds, the fact it stored (null when no sentence was supported), what
 *   changed (sentences kept, added, left out of the previous version), the prompt version, the
 *   model and the tokens.
 * - `summary_sentences`: every sentence the model wrote, supported or not, with its citations,
 *   the check's verdict and reason.
 *
 * Both tables are append-only. Keys begin with the subject (docs/SCALE.md).
 */
export const sql = `
ALTER TABLE slots DROP CONSTRAINT slots_rule_check;
ALTER TABLE slots
  ADD CONSTRAINT slots_rule_check CHECK (rule IN ('user_fact', 'correction', 'action', 'summary')),
  ADD COLUMN summary_scope text CHECK (summary_scope IN ('rolling', 'session')),
  ADD CONSTRAINT slots_summary_scope CHECK ((rule = 'summary') = (summary_scope IS NOT NULL));

ALTER TABLE facts
  ADD COLUMN evidence_citations jsonb,
  ADD CONSTRAINT facts_citations_summarized
    CHECK (evidence_citations IS NULL OR (origin = 'summarized' AND jsonb_typeof(evidence_citations) = 'array'));

CREATE OR REPLACE FUNCTION memledger_fact_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'memledger: facts are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.subject_id, NEW.id, NEW.slot, NEW.key, NEW.text, NEW.origin, NEW.attested,
      NEW.evidence_turn_id, NEW.evidence_session_id, NEW.evidence_seq, NEW.evidence_quote,
      NEW.evidence_tool, NEW.evidence_citations, NEW.proposed_by, NEW.valid_from, NEW.recorded_at)
     IS DISTINCT FROM
     (OLD.subject_id, OLD.id, OLD.slot, OLD.key, OLD.text, OLD.origin, OLD.attested,
      OLD.evidence_turn_id, OLD.evidence_session_id, OLD.evidence_seq, OLD.evidence_quote,
      OLD.evidence_tool, OLD.evidence_citations, OLD.proposed_by, OLD.valid_from, OLD.recorded_at) THEN
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

CREATE TABLE summaries (
  subject_id      text NOT NULL,
  id              text NOT NULL,
  aspect          text NOT NULL,
  session_id      text NOT NULL,
  previous_id     text,
  fact_id         text,
  sentences       integer NOT NULL CHECK (sentences >= 0),
  supported       integer NOT NULL CHECK (supported >= 0 AND supported <= sentences),
  kept            integer NOT NULL CHECK (kept >= 0),
  added           integer NOT NULL CHECK (added >= 0),
  left_out        integer NOT NULL CHECK (left_out >= 0),
  prompt_version  text NOT NULL,
  provider        text NOT NULL,
  model           text NOT NULL,
  input_tokens    bigint NOT NULL CHECK (input_tokens >= 0),
  output_tokens   bigint NOT NULL CHECK (output_tokens >= 0),
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id),
  FOREIGN KEY (subject_id, aspect) REFERENCES slots (subject_id, name),
  FOREIGN KEY (subject_id, session_id) REFERENCES sessions (subject_id, id),
  FOREIGN KEY (subject_id, previous_id) REFERENCES summaries (subject_id, id),
  FOREIGN KEY (subject_id, fact_id) REFERENCES facts (subject_id, id),
  CHECK ((fact_id IS NULL) = (supported = 0))
);

CREATE INDEX summaries_by_aspect ON summaries (subject_id, aspect, created_at);

CREATE TABLE summary_sentences (
  subject_id  text NOT NULL,
  summary_id  text NOT NULL,
  position    integer NOT NULL CHECK (position >= 1),
  text        text NOT NULL,
  citations   jsonb NOT NULL CHECK (jsonb_typeof(citations) = 'array'),
  verdict     text NOT NULL CHECK (verdict IN ('supported', 'kept', 'turn_not_found', 'not_user_turn',
                                               'unattested', 'idle_citation', 'no_citation',
                                               'retracted_claim', 'failure_claim', 'first_person',
                                               'hidden_characters', 'invalid')),
  reason      text NOT NULL,
  PRIMARY KEY (subject_id, summary_id, position),
  FOREIGN KEY (subject_id, summary_id) REFERENCES summaries (subject_id, id)
);

CREATE TRIGGER summaries_append_only BEFORE UPDATE OR DELETE ON summaries
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER summary_sentences_append_only BEFORE UPDATE OR DELETE ON summary_sentences
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
`;
