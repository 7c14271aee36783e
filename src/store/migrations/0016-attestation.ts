/**
 * Migration 16: typed attestation (issue 16). The gate's `attested` flag said only that the
 * quote's words overlapped the claim's; `facts.attestation` says what the quoted sentence does
 * with them (asserted, presupposed, hypothetical, negated, other_holder, paraphrase_unverified,
 * not_found; src/domain/attestation.ts) and `facts.attestation_reason` why, in a sentence the
 * reviewer reads. `attested` stays, and is true exactly when the verdict is `asserted`.
 *
 * Facts stored before this migration keep NULL in both (their flag came from word overlap and is
 * shown as such); actions (attested by their receipt) and summaries (each sentence checked
 * against the turns it cites) have no quote verdict and keep NULL too. Both columns are written
 * once, with the fact, and are part of what the owner signs (docs/TRUST.md).
 */
export const sql = `
ALTER TABLE facts
  ADD COLUMN attestation text CHECK (attestation IN ('asserted', 'presupposed', 'hypothetical',
    'negated', 'other_holder', 'paraphrase_unverified', 'not_found')),
  ADD COLUMN attestation_reason text,
  ADD CONSTRAINT facts_attestation_reason
    CHECK ((attestation IS NULL) = (attestation_reason IS NULL)),
  ADD CONSTRAINT facts_attestation_flag
    CHECK (attestation IS NULL OR attested = (attestation = 'asserted'));

CREATE OR REPLACE FUNCTION memledger_fact_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'memledger: facts are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.subject_id, NEW.id, NEW.slot, NEW.key, NEW.text, NEW.origin, NEW.attested,
      NEW.evidence_turn_id, NEW.evidence_session_id, NEW.evidence_seq, NEW.evidence_quote,
      NEW.evidence_tool, NEW.evidence_citations, NEW.attestation, NEW.attestation_reason,
      NEW.proposed_by, NEW.valid_from, NEW.recorded_at)
     IS DISTINCT FROM
     (OLD.subject_id, OLD.id, OLD.slot, OLD.key, OLD.text, OLD.origin, OLD.attested,
      OLD.evidence_turn_id, OLD.evidence_session_id, OLD.evidence_seq, OLD.evidence_quote,
      OLD.evidence_tool, OLD.evidence_citations, OLD.attestation, OLD.attestation_reason,
      OLD.proposed_by, OLD.valid_from, OLD.recorded_at) THEN
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
