/**
 * Migration 22: a subject that can be carried to another store (docs/EXPORT.md). An import writes
 * a subject's rows as they were exported, in one transaction; its facts and retractions cite each
 * other (a retracted fact its retraction, a retraction its fact and the fact it restored) and
 * facts cite facts, so every foreign key becomes deferrable (still checked at once, unless a
 * transaction defers them: only an import does, and they are checked at its commit).
 *
 * Calibrations are store-wide: a probe run on this store is trusted only on a calibration that
 * passed here. An imported subject's probe records keep citing the calibrations they ran on,
 * which come with them, marked `imported`: the probe log reads them, and no probe run here is
 * ever trusted on one.
 */
export const sql = `
DO $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT c.conrelid::regclass AS tbl, c.conname
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
    ORDER BY c.conname
  LOOP
    EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE',
                   r.tbl, r.conname);
  END LOOP;
END $$;

ALTER TABLE probe_calibrations ADD COLUMN imported boolean NOT NULL DEFAULT false;
`;
