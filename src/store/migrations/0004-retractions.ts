/** The typed retraction ledger; facts learn which retraction took them down or restored them. */
export const sql = `
-- Same steps as normalizeObservation in src/domain/retraction.ts.
CREATE FUNCTION memledger_observation_norm(x text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT btrim(regexp_replace(lower(btrim(regexp_replace(x, '\\s+', ' ', 'g'))), '[.!?;:,]+$', ''))
$$;

CREATE TABLE retractions (
  subject_id               text NOT NULL REFERENCES subjects (id),
  id                       text NOT NULL UNIQUE,
  claim                    text NOT NULL CHECK (btrim(claim) <> ''),
  claimed_at               timestamptz,
  claim_surface            text,
  claim_ref                text,
  stood_on                 text NOT NULL CHECK (btrim(stood_on) <> ''),
  why_wrong                text NOT NULL CHECK (btrim(why_wrong) <> ''),
  corrected_claim          text NOT NULL CHECK (btrim(corrected_claim) <> ''),
  corrected_at             timestamptz NOT NULL,
  caught_by                text NOT NULL CHECK (caught_by IN ('self', 'owner', 'together', 'reality')),
  tags                     text[] NOT NULL DEFAULT '{}',
  procedure                text NOT NULL CHECK (btrim(procedure) <> ''),
  pass_observation         text NOT NULL,
  overturn_condition       text NOT NULL,
  probe_spec               jsonb,
  probe_stands_verdict     text,
  probe_overturns_verdict  text,
  due_at                   timestamptz NOT NULL,
  fact_id                  text REFERENCES facts (id),
  verdict                  text NOT NULL DEFAULT 'unchecked'
                           CHECK (verdict IN ('unchecked', 'stands', 'overturned', 'unresolvable')),
  settled_at               timestamptz,
  settled_outcome          text,
  settled_by               text,
  settled_probe_record_id  text REFERENCES probe_records (id),
  restored_fact_id         text REFERENCES facts (id),
  recorded_at              timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id),
  CONSTRAINT retractions_polarity_distinct CHECK (
    memledger_observation_norm(pass_observation) <> ''
    AND memledger_observation_norm(overturn_condition) <> ''
    AND memledger_observation_norm(pass_observation) <> memledger_observation_norm(overturn_condition)
  ),
  CONSTRAINT retractions_probe_sides CHECK (
    (probe_spec IS NULL AND probe_stands_verdict IS NULL AND probe_overturns_verdict IS NULL)
    OR (probe_spec IS NOT NULL AND probe_stands_verdict IS NOT NULL AND probe_overturns_verdict IS NOT NULL
        AND probe_stands_verdict <> probe_overturns_verdict)
  ),
  CONSTRAINT retractions_settlement CHECK (
    (verdict = 'unchecked') = (settled_at IS NULL)
    AND (verdict = 'unchecked' OR (settled_outcome IS NOT NULL AND settled_by IS NOT NULL))
  )
);

CREATE INDEX retractions_due ON retractions (subject_id, verdict, due_at);
CREATE INDEX retractions_recent ON retractions (subject_id, corrected_at DESC, id DESC);

-- What was claimed and why it was retracted never changes; a settlement is written once.
CREATE FUNCTION memledger_retraction_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'memledger: retractions are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.verdict <> 'unchecked' THEN
    RAISE EXCEPTION 'memledger: a settled retraction is final' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.subject_id, NEW.id, NEW.claim, NEW.claimed_at, NEW.claim_surface, NEW.claim_ref, NEW.stood_on,
      NEW.why_wrong, NEW.corrected_claim, NEW.corrected_at, NEW.caught_by, NEW.tags, NEW.procedure,
      NEW.pass_observation, NEW.overturn_condition, NEW.probe_spec, NEW.probe_stands_verdict,
      NEW.probe_overturns_verdict, NEW.due_at, NEW.fact_id, NEW.recorded_at)
     IS DISTINCT FROM
     (OLD.subject_id, OLD.id, OLD.claim, OLD.claimed_at, OLD.claim_surface, OLD.claim_ref, OLD.stood_on,
      OLD.why_wrong, OLD.corrected_claim, OLD.corrected_at, OLD.caught_by, OLD.tags, OLD.procedure,
      OLD.pass_observation, OLD.overturn_condition, OLD.probe_spec, OLD.probe_stands_verdict,
      OLD.probe_overturns_verdict, OLD.due_at, OLD.fact_id, OLD.recorded_at) THEN
    RAISE EXCEPTION 'memledger: a retraction''s claim and falsifier are immutable' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER retractions_guard BEFORE UPDATE OR DELETE ON retractions
  FOR EACH ROW EXECUTE FUNCTION memledger_retraction_guard();

ALTER TABLE facts
  ADD COLUMN retraction_id text REFERENCES retractions (id),
  ADD COLUMN restored_from_id text REFERENCES facts (id);
`;
