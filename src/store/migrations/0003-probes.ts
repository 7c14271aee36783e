/** Probe instruments' dual-needle calibrations and every probe run; both append-only. */
export const sql = `
CREATE TABLE probe_calibrations (
  seq               bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id                text PRIMARY KEY,
  instrument        text NOT NULL CHECK (length(instrument) > 0),
  kind              text NOT NULL CHECK (kind IN ('file', 'sql', 'http')),
  fingerprint       text NOT NULL,
  passed            boolean NOT NULL,
  positive_verdict  text NOT NULL
                    CHECK (positive_verdict IN ('verified', 'verified_missing', 'falsified', 'error')),
  negative_verdict  text NOT NULL
                    CHECK (negative_verdict IN ('verified', 'verified_missing', 'falsified', 'error')),
  detail            jsonb NOT NULL,
  ran_at            timestamptz NOT NULL,
  -- passing means the controls diverged: the present needle verified, the absent one falsified
  CONSTRAINT probe_calibrations_pass_is_divergence CHECK (
    passed = (positive_verdict = 'verified' AND negative_verdict = 'falsified')
  )
);

CREATE INDEX probe_calibrations_latest ON probe_calibrations (instrument, fingerprint, seq DESC);

CREATE TRIGGER probe_calibrations_append_only BEFORE UPDATE OR DELETE ON probe_calibrations
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();

CREATE TABLE probe_records (
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id              text PRIMARY KEY,
  subject_id      text REFERENCES subjects (id),
  instrument      text NOT NULL CHECK (length(instrument) > 0),
  kind            text NOT NULL CHECK (kind IN ('file', 'sql', 'http')),
  spec            jsonb NOT NULL,
  verdict         text NOT NULL CHECK (verdict IN ('verified', 'verified_missing', 'falsified', 'error')),
  error_code      text,
  evidence        jsonb NOT NULL,
  calibrated      boolean NOT NULL,
  calibration_id  text REFERENCES probe_calibrations (id),
  purpose         text,
  ran_at          timestamptz NOT NULL,
  CONSTRAINT probe_records_error_has_code CHECK ((verdict = 'error') = (error_code IS NOT NULL)),
  CONSTRAINT probe_records_calibrated_cites CHECK (NOT calibrated OR calibration_id IS NOT NULL)
);

CREATE INDEX probe_records_by_subject ON probe_records (subject_id, seq DESC);

-- A record may say "calibrated" only when the calibration it cites passed, for its instrument.
CREATE FUNCTION memledger_probe_record_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.calibrated AND NOT EXISTS (
    SELECT 1 FROM probe_calibrations c
    WHERE c.id = NEW.calibration_id AND c.passed AND c.instrument = NEW.instrument
  ) THEN
    RAISE EXCEPTION 'memledger: a probe record cites no passing calibration of %', NEW.instrument
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER probe_records_guard BEFORE INSERT ON probe_records
  FOR EACH ROW EXECUTE FUNCTION memledger_probe_record_guard();

CREATE TRIGGER probe_records_append_only BEFORE UPDATE OR DELETE ON probe_records
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
`;
