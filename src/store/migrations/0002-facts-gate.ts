/** Slots, facts with passports, the dropped log, and the owner's signed decision chain. */
export const sql = `
ALTER TABLE subjects
  ADD COLUMN owner_public_key text,
  ADD COLUMN owner_key_id text,
  ADD CONSTRAINT subjects_owner_key_pair CHECK ((owner_public_key IS NULL) = (owner_key_id IS NULL));

CREATE TABLE slots (
  subject_id   text NOT NULL REFERENCES subjects (id),
  name         text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,63}$'),
  rule         text NOT NULL CHECK (rule IN ('user_fact', 'correction', 'action')),
  auto_live    boolean NOT NULL DEFAULT false CHECK (NOT auto_live OR rule = 'action'),
  declared_at  timestamptz NOT NULL,
  PRIMARY KEY (subject_id, name)
);

CREATE TABLE facts (
  subject_id          text NOT NULL,
  id                  text NOT NULL UNIQUE,
  slot                text NOT NULL,
  key                 text,
  text                text NOT NULL CHECK (length(text) > 0),
  origin              text NOT NULL CHECK (origin IN ('did', 'saw', 'inferred', 'summarized')),
  status              text NOT NULL CHECK (status IN ('proposed', 'active', 'rejected', 'superseded',
                                                      'retracted', 'expired', 'unverified')),
  attested            boolean NOT NULL,
  evidence_turn_id    text REFERENCES turns (id),
  evidence_session_id text,
  evidence_seq        integer,
  evidence_quote      text,
  evidence_tool       text,
  proposed_by         text NOT NULL,
  supersedes_id       text REFERENCES facts (id),
  superseded_by_id    text REFERENCES facts (id),
  valid_from          timestamptz,
  valid_to            timestamptz,
  recorded_at         timestamptz NOT NULL,
  status_at           timestamptz NOT NULL,
  superseded_at       timestamptz,
  -- who made it live: the owner's signed decision, its receipt (action slots set to auto-live),
  -- or the settlement of a retraction that was overturned (a restoration)
  promoted_by         text CHECK (promoted_by IN ('owner', 'receipt', 'restoration')),
  PRIMARY KEY (subject_id, id),
  FOREIGN KEY (subject_id, slot) REFERENCES slots (subject_id, name),
  CONSTRAINT facts_did_has_tool CHECK (origin <> 'did' OR evidence_tool IS NOT NULL),
  CONSTRAINT facts_superseded_link CHECK ((status = 'superseded') = (superseded_by_id IS NOT NULL))
);

CREATE INDEX facts_by_slot ON facts (subject_id, slot, status);
CREATE INDEX facts_by_status_recent ON facts (subject_id, status, recorded_at DESC, id DESC);
-- One live value per slot+key: two racing promotions cannot both win.
CREATE UNIQUE INDEX facts_one_live_per_key ON facts (subject_id, slot, key)
  WHERE status = 'active' AND key IS NOT NULL;

-- A fact's words and evidence never change; only its status moves (by decision or supersession).
CREATE FUNCTION memledger_fact_guard() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER facts_guard BEFORE UPDATE OR DELETE ON facts
  FOR EACH ROW EXECUTE FUNCTION memledger_fact_guard();

CREATE TABLE dropped_proposals (
  subject_id   text NOT NULL REFERENCES subjects (id),
  id           text NOT NULL UNIQUE,
  session_id   text,
  slot         text NOT NULL,
  text         text NOT NULL,
  proposal     jsonb NOT NULL,
  code         text NOT NULL,
  reason       text NOT NULL,
  proposed_by  text NOT NULL,
  dropped_at   timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id)
);

CREATE TRIGGER dropped_append_only BEFORE UPDATE OR DELETE ON dropped_proposals
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();

-- The owner's decisions: a hash chain per subject, each link signed with the owner's Ed25519 key.
CREATE TABLE decisions (
  subject_id    text NOT NULL REFERENCES subjects (id),
  seq           integer NOT NULL CHECK (seq >= 1),
  proposal_id   text NOT NULL,
  content_hash  text NOT NULL,
  decision      text NOT NULL CHECK (decision IN ('approve', 'reject')),
  decided_at    text NOT NULL,
  note          text NOT NULL,
  key_id        text NOT NULL,
  prev_hash     text NOT NULL,
  hash          text NOT NULL,
  signature     text NOT NULL,
  PRIMARY KEY (subject_id, seq)
);

CREATE TRIGGER decisions_append_only BEFORE UPDATE OR DELETE ON decisions
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
`;
