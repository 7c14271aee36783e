/** What arrival reads and records: commitments, actions, the tool registry, arrival manifests. */
export const sql = `
-- An IANA zone name; NULL renders dates in the process's zone.
ALTER TABLE subjects ADD COLUMN time_zone text;

CREATE TABLE commitments (
  subject_id  text NOT NULL REFERENCES subjects (id),
  id          text NOT NULL UNIQUE,
  title       text NOT NULL CHECK (btrim(title) <> ''),
  due_date    date,
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'dropped')),
  created_at  timestamptz NOT NULL,
  status_at   timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id)
);
CREATE INDEX commitments_by_status ON commitments (subject_id, status, created_at DESC);

CREATE TABLE actions (
  subject_id      text NOT NULL REFERENCES subjects (id),
  id              text NOT NULL UNIQUE,
  tool            text NOT NULL CHECK (btrim(tool) <> ''),
  surface         text NOT NULL CHECK (btrim(surface) <> ''),
  target_summary  text NOT NULL CHECK (btrim(target_summary) <> ''),
  status          text NOT NULL CHECK (status IN ('pending', 'confirmed', 'failed')),
  completed_at    timestamptz,
  recorded_at     timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id),
  CONSTRAINT actions_completed CHECK ((status = 'pending') = (completed_at IS NULL))
);
CREATE INDEX actions_recent ON actions (subject_id, status, completed_at DESC);

-- Each tool declares the surfaces it belongs to; toolsFor(surface) reads only this table.
CREATE TABLE tools (
  subject_id     text NOT NULL REFERENCES subjects (id),
  name           text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  description    text NOT NULL DEFAULT '',
  surfaces       text[] NOT NULL CHECK (cardinality(surfaces) > 0),
  registered_at  timestamptz NOT NULL,
  PRIMARY KEY (subject_id, name)
);

-- The introspection ledger: what each arrival gave, so the next can diff against it.
CREATE TABLE arrival_manifests (
  subject_id   text NOT NULL REFERENCES subjects (id),
  id           text NOT NULL UNIQUE,
  -- arrival order, even for two arrivals at the same clock reading
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  surface      text NOT NULL,
  session_id   text,
  blocks       jsonb NOT NULL,
  tools        text[] NOT NULL,
  tool_count   integer NOT NULL CHECK (tool_count >= 0),
  degraded     text[] NOT NULL,
  total_chars  integer NOT NULL CHECK (total_chars >= 0),
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (subject_id, id)
);
CREATE INDEX arrival_manifests_by_surface ON arrival_manifests (subject_id, surface, seq DESC);

CREATE TRIGGER arrival_manifests_append_only BEFORE UPDATE OR DELETE ON arrival_manifests
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();
`;
