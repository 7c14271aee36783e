/** Subjects, sessions, turns with receipts, utility usage. */
export const sql = `
CREATE TABLE subjects (
  id          text PRIMARY KEY,
  created_at  timestamptz NOT NULL
);

CREATE TABLE sessions (
  subject_id  text NOT NULL REFERENCES subjects (id),
  id          text NOT NULL UNIQUE,
  title       text,
  last_seq    integer NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  -- when the last turn was recorded: recent-session lists read this, not every turn
  last_turn_at timestamptz,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id)
);

-- No index on last_turn_at: every turn updates it, and an unindexed column keeps that update
-- HOT (no index entries rewritten). Recent-session lists sort one subject's sessions instead.

-- Append-only: a turn is never edited or deleted (see the trigger below).
CREATE TABLE turns (
  subject_id      text NOT NULL,
  session_id      text NOT NULL,
  seq             integer NOT NULL CHECK (seq >= 1),
  id              text NOT NULL UNIQUE,
  role            text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
  content         text NOT NULL CHECK (length(content) > 0),
  corrective      boolean NOT NULL DEFAULT false CHECK (NOT corrective OR role = 'user'),
  receipt_kind    text CHECK (receipt_kind IN ('tools', 'none', 'unknown')),
  receipt_tools   text[],
  receipt_sources text[],
  recorded_at     timestamptz NOT NULL,
  PRIMARY KEY (subject_id, session_id, seq),
  FOREIGN KEY (subject_id, session_id) REFERENCES sessions (subject_id, id),
  -- every assistant turn has a receipt; no other role has one
  CONSTRAINT turns_receipt_iff_assistant CHECK ((role = 'assistant') = (receipt_kind IS NOT NULL)),
  -- "tools ran" names at least one tool; "none" and "unknown" carry no lists
  CONSTRAINT turns_receipt_shape CHECK (
    CASE receipt_kind
      WHEN 'tools' THEN receipt_tools IS NOT NULL AND cardinality(receipt_tools) > 0
                        AND receipt_sources IS NOT NULL
      ELSE receipt_tools IS NULL AND receipt_sources IS NULL
    END
  )
);

CREATE FUNCTION memledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'memledger: % is append-only', TG_TABLE_NAME USING ERRCODE = 'P0001';
END;
$$;

CREATE TRIGGER turns_append_only BEFORE UPDATE OR DELETE ON turns
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();

-- Utility generations are counted here and never become turns.
CREATE TABLE utility_usage (
  subject_id  text NOT NULL,
  session_id  text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('title', 'insight', 'utility')),
  requests    integer NOT NULL CHECK (requests >= 1),
  chars       bigint NOT NULL CHECK (chars >= 0),
  first_at    timestamptz NOT NULL,
  last_at     timestamptz NOT NULL,
  PRIMARY KEY (subject_id, session_id, kind),
  FOREIGN KEY (subject_id, session_id) REFERENCES sessions (subject_id, id)
);
`;
