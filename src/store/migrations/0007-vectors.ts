/**
 * Optional dense vectors for recall: one per turn and per fact for each embedding model that was
 * asked to embed them. Stored as plain `real[]` so every PostgreSQL can hold them; where pgvector
 * exists (always in PGlite, which bundles it) recall casts them to `vector` and lets pgvector
 * compute the distances, elsewhere plain SQL does. Vectors are unit length when written, so the
 * cosine is their dot product either way. They are derived data: recall reads them, the engine
 * writes them (`embedPending`), nothing else depends on them.
 */
export const sql = `
CREATE TABLE turn_vectors (
  subject_id  text NOT NULL,
  session_id  text NOT NULL,
  seq         integer NOT NULL,
  -- the embedder's model name: vectors of different models are never compared
  model       text NOT NULL CHECK (btrim(model) <> ''),
  dims        integer NOT NULL CHECK (dims BETWEEN 1 AND 16000),
  embedding   real[] NOT NULL CHECK (array_ndims(embedding) = 1 AND cardinality(embedding) = dims),
  PRIMARY KEY (subject_id, model, session_id, seq),
  FOREIGN KEY (subject_id, session_id, seq) REFERENCES turns (subject_id, session_id, seq)
);

CREATE TABLE fact_vectors (
  subject_id  text NOT NULL,
  fact_id     text NOT NULL,
  model       text NOT NULL CHECK (btrim(model) <> ''),
  dims        integer NOT NULL CHECK (dims BETWEEN 1 AND 16000),
  embedding   real[] NOT NULL CHECK (array_ndims(embedding) = 1 AND cardinality(embedding) = dims),
  PRIMARY KEY (subject_id, model, fact_id),
  FOREIGN KEY (subject_id, fact_id) REFERENCES facts (subject_id, id)
);
`;
