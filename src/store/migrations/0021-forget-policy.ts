/**
 * Migration 21: forgetting under a policy the owner signed (docs/TRUST.md, "Forgetting under a
 * policy"). A `policy` link on the chain says whether the user's own quoted forget requests are
 * honoured at once and how many days turns are kept; a forget it allows removes only what the
 * owner never signed (history, pending proposals, the dropped log), so it needs no link of its
 * own: `policy_forgets` records it (ids only, as a forget link's note would) with the policy link
 * that allowed it, and a tombstone says who forgot it (`forgotten_by`: null for the owner's signed
 * forget, `request` or `retention`).
 */
export const sql = `
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate', 'revoke', 'retract', 'forget', 'policy'));

ALTER TABLE turns ADD COLUMN forgotten_by text
  CHECK (forgotten_by IN ('request', 'retention'));
ALTER TABLE turns ADD CONSTRAINT turns_forgotten_by CHECK (forgotten_by IS NULL OR forget_id IS NOT NULL);

CREATE TABLE policy_forgets (
  subject_id   text NOT NULL REFERENCES subjects(id),
  id           text NOT NULL,
  basis        text NOT NULL CHECK (basis IN ('request', 'retention')),
  policy_seq   integer NOT NULL CHECK (policy_seq > 0),
  request_id   text,
  note         text NOT NULL,
  forgotten_at timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id),
  CHECK ((basis = 'request') = (request_id IS NOT NULL))
);
CREATE INDEX policy_forgets_at ON policy_forgets (subject_id, forgotten_at);
CREATE TRIGGER policy_forgets_append_only BEFORE UPDATE OR DELETE ON policy_forgets
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
`;
