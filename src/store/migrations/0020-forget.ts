/**
 * Migration 20: the owner can forget (docs/TRUST.md, "Forgetting"). A `forget` link on the chain
 * names, by id, what one forget removed; a forgotten turn stays as a tombstone (its seq, id, role
 * and time, with the forget that emptied it), so a session's numbering stays whole; every other
 * row it names is deleted. The append-only and immutability guards step aside only inside a
 * transaction that says it is forgetting (`memledger.forgetting`, set locally by the forget
 * itself), and for turns only to empty them: a turn is still never deleted, a link never touched.
 * An agent's forget request (the user's words asking, quoted from a user turn, and what to forget)
 * waits in `forget_requests` until the owner honours it with a signed forget or declines it.
 */
const FORGETTING = `current_setting('memledger.forgetting', true) IS DISTINCT FROM 'on'`;

/** A guard trigger recreated to step aside while a forget runs. */
const relaxed = (table: string, trigger: string, fn: string, events = 'DELETE OR UPDATE'): string =>
  `DROP TRIGGER ${trigger} ON ${table};
CREATE TRIGGER ${trigger} BEFORE ${events} ON ${table}
  FOR EACH ROW WHEN (${FORGETTING}) EXECUTE FUNCTION ${fn}();`;

export const sql = `
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate', 'revoke', 'retract', 'forget'));

ALTER TABLE turns ADD COLUMN forget_id text;
ALTER TABLE turns ADD COLUMN forgotten_at timestamptz;
ALTER TABLE turns DROP CONSTRAINT turns_content_check;
ALTER TABLE turns ADD CONSTRAINT turns_content_check
  CHECK (length(content) > 0 OR forget_id IS NOT NULL);
ALTER TABLE turns ADD CONSTRAINT turns_tombstone CHECK (
  forget_id IS NULL OR (
    content = '' AND forgotten_at IS NOT NULL AND speaker IS NULL
    AND receipt_tools IS NULL AND receipt_sources IS NULL
    AND (terms IS NULL OR cardinality(terms) = 0)));
CREATE INDEX turns_forgotten ON turns (subject_id, forget_id) WHERE forget_id IS NOT NULL;

DROP TRIGGER turns_append_only ON turns;
CREATE TRIGGER turns_append_only BEFORE UPDATE ON turns
  FOR EACH ROW WHEN (${FORGETTING} OR NEW.forget_id IS NULL)
  EXECUTE FUNCTION memledger_append_only();
CREATE TRIGGER turns_never_deleted BEFORE DELETE ON turns
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
${relaxed('facts', 'facts_guard', 'memledger_fact_guard')}
${relaxed('retractions', 'retractions_guard', 'memledger_retraction_guard')}
${relaxed('dropped_proposals', 'dropped_append_only', 'memledger_append_only')}
${relaxed('probe_records', 'probe_records_append_only', 'memledger_append_only')}
${relaxed('reflection_items', 'reflection_items_append_only', 'memledger_append_only')}
${relaxed('summaries', 'summaries_append_only', 'memledger_append_only')}
${relaxed('summary_sentences', 'summary_sentences_append_only', 'memledger_append_only')}

CREATE TABLE forget_requests (
  subject_id   text NOT NULL REFERENCES subjects(id),
  id           text NOT NULL,
  session_id   text NOT NULL,
  seq          integer NOT NULL,
  quote        text NOT NULL,
  scope        jsonb NOT NULL CHECK (jsonb_typeof(scope) = 'object'),
  requested_by text NOT NULL,
  recorded_at  timestamptz NOT NULL,
  status       text NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'honoured', 'declined')),
  decided_at   timestamptz,
  forget_id    text,
  PRIMARY KEY (subject_id, id),
  FOREIGN KEY (subject_id, session_id, seq) REFERENCES turns (subject_id, session_id, seq),
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'honoured') = (forget_id IS NOT NULL))
);
CREATE INDEX forget_requests_pending ON forget_requests (subject_id, recorded_at)
  WHERE status = 'pending';
`;
