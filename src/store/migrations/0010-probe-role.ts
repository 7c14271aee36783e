/**
 * The role SQL probes run as (`SET LOCAL ROLE` inside the probe's transaction). Roles belong to
 * the whole PostgreSQL cluster, so every store on a server shares this one name.
 */
export const PROBE_ROLE = 'memledger_probe';

/**
 * Migration 10: the probe role. It is created without any attribute a probe could abuse (no
 * superuser, replication, bypassrls, createrole, createdb, login; it inherits nothing), so
 * side-effecting, file and superuser functions are refused by PostgreSQL itself. It gets USAGE on
 * the store's schema (so the names there resolve and a host can grant a table of its own) and
 * SELECT on `schema_migrations` (version numbers and checksums, nothing about any subject): no
 * other privilege on memledger's tables. The host grants it what its probes may read.
 *
 * Idempotent across databases and stores: the role may exist already (made by another store, or
 * by another process a moment ago). A user that may not create roles, or may not grant this one
 * to itself, still migrates: sql probes then answer PROBE_ROLE_MISSING until an administrator
 * does it (docs/PROBES.md). A role someone else made with more attributes is stripped of them
 * when the user may; otherwise probes refuse it at run time.
 *
 * PostgreSQL 16 and later (PGlite is 18) separate membership from the right to SET ROLE to it,
 * so the check asks for SET there and for MEMBER before.
 */
export const sql = `
DO $probe_role$
DECLARE
  can_set text := CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'SET' ELSE 'MEMBER' END;
BEGIN
  BEGIN
    CREATE ROLE memledger_probe NOLOGIN NOSUPERUSER NOREPLICATION NOBYPASSRLS
      NOCREATEROLE NOCREATEDB NOINHERIT;
  EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;
    WHEN insufficient_privilege THEN NULL;
  END;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memledger_probe') THEN
    RAISE NOTICE 'memledger: cannot create role memledger_probe; sql probes answer PROBE_ROLE_MISSING until an administrator creates it (docs/PROBES.md)';
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memledger_probe'
              AND (rolsuper OR rolreplication OR rolbypassrls OR rolcreaterole OR rolcreatedb
                   OR rolcanlogin)) THEN
    BEGIN
      ALTER ROLE memledger_probe NOLOGIN NOSUPERUSER NOREPLICATION NOBYPASSRLS
        NOCREATEROLE NOCREATEDB NOINHERIT;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
  END IF;
  BEGIN
    IF NOT pg_has_role(current_user, 'memledger_probe', can_set) THEN
      GRANT memledger_probe TO CURRENT_USER;
    END IF;
  EXCEPTION WHEN insufficient_privilege OR unique_violation THEN NULL;
  END;
  BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO memledger_probe', current_schema());
    GRANT SELECT ON schema_migrations TO memledger_probe;
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END
$probe_role$;
`;
