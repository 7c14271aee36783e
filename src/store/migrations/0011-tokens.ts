/**
 * Migration 11: the tokens `memledger serve` and `memledger mcp` accept. A token's secret is
 * stored only as its SHA-256 hash; its subject, role and hash are signed by the subject's owner
 * key, and the signature is checked on every authentication, so a changed column refuses the
 * token instead of widening it. A token is looked up by its hash before its subject is known,
 * which makes this table a reference table when the store is distributed by subject
 * (docs/SCALE.md); so it has no foreign key to `subjects`, and the engine checks the subject.
 *
 * Rows are never deleted; the only change a row takes is its revocation, once.
 */
export const sql = `
CREATE TABLE access_tokens (
  id           text PRIMARY KEY,
  subject_id   text NOT NULL,
  role         text NOT NULL CHECK (role IN ('agent', 'reader')),
  name         text,
  token_hash   text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  key_id       text NOT NULL,
  signature    text NOT NULL,
  created_at   text NOT NULL,
  revoked_at   timestamptz
);

CREATE INDEX access_tokens_by_subject ON access_tokens (subject_id, created_at);

CREATE FUNCTION memledger_token_revoke_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'memledger: access tokens are never deleted; revoke them';
  END IF;
  IF OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL
     OR (NEW.id, NEW.subject_id, NEW.role, NEW.name, NEW.token_hash, NEW.key_id,
         NEW.signature, NEW.created_at)
        IS DISTINCT FROM
        (OLD.id, OLD.subject_id, OLD.role, OLD.name, OLD.token_hash, OLD.key_id,
         OLD.signature, OLD.created_at) THEN
    RAISE EXCEPTION 'memledger: an access token changes only by being revoked, once';
  END IF;
  RETURN NEW;
END
$fn$;

CREATE TRIGGER access_tokens_revoke_only BEFORE UPDATE OR DELETE ON access_tokens
  FOR EACH ROW EXECUTE FUNCTION memledger_token_revoke_only();
`;
