/**
 * Migration 12: every key begins with the subject (docs/SCALE.md). Until now sessions, turns,
 * facts, dropped proposals, retractions, commitments, actions and arrival manifests also had a
 * store-wide UNIQUE (id), and the foreign keys between facts, turns, retractions and probe
 * records named their target by id alone. An id is now unique per subject: two subjects may each
 * have a session called "s1" (a host chooses session ids; Claude Code hooks use Claude's), and
 * neither learns that the other has one (SESSION_EXISTS was an oracle across subjects). Every
 * statement that named a row by its id or its session alone names its subject too, in the same
 * release (src/store).
 *
 * Steps, in the order the old constraints depend on each other:
 * 1. drop the foreign keys that name a row by id alone (they rest on the UNIQUE (id) constraints);
 * 2. drop each UNIQUE (id): the primary keys already are (subject_id, id), or for turns
 *    (subject_id, session_id, seq), which gets UNIQUE (subject_id, id) as the target of facts'
 *    evidence;
 * 3. probe records belong to their subject: subject_id NOT NULL, the primary key (subject_id,
 *    id), and no store-wide UNIQUE (seq) (an identity column, so its values stay distinct; the
 *    log orders one subject's records by it through probe_records_by_subject);
 * 4. the foreign keys again, each carrying the subject on both sides. They are MATCH SIMPLE (the
 *    default): a row whose id column is NULL (a fact with no evidence, a retraction not settled)
 *    is not checked, as before.
 *
 * Probe records with no subject. Versions before subject handles (stores up to migration 7)
 * let `memledger probe run` without `--subject` write a record with subject_id NULL;
 * calibration controls never wrote records (they go to probe_calibrations, a store-wide table
 * that stays as it is), and a retraction's settlement always ran its probe with the
 * retraction's subject. No version since reads such a record: a subject's `probes.get` and
 * `probes.log` answer only that subject's records, and none settles a retraction. They belong to
 * no subject, so no subject's rows may hold them, and giving them one would put runs into a log
 * they were never part of. They are deleted here (the append-only guard lifted for exactly that
 * statement, as migration 6 did for turns), which changes nothing any handle reads; a NOTICE
 * says how many. A store whose rows point across subjects (a fact citing another subject's
 * turn, a settlement citing another subject's probe record: no version of memledger writes
 * one) fails step 4 with the foreign key's own message, and the whole migration rolls back.
 *
 * Cost: one transaction that rewrites no table. It builds two indexes (turns, probe_records),
 * scans probe_records for NULLs, and validates the eight foreign keys by reading facts and
 * retractions against their targets, all in time proportional to those tables' rows; the
 * tables it alters are locked against writes until it commits.
 */
export const sql = `
-- 1. the foreign keys that name a row by id alone
ALTER TABLE facts
  DROP CONSTRAINT facts_evidence_turn_id_fkey,
  DROP CONSTRAINT facts_supersedes_id_fkey,
  DROP CONSTRAINT facts_superseded_by_id_fkey,
  DROP CONSTRAINT facts_restored_from_id_fkey,
  DROP CONSTRAINT facts_retraction_id_fkey;
ALTER TABLE retractions
  DROP CONSTRAINT retractions_fact_id_fkey,
  DROP CONSTRAINT retractions_restored_fact_id_fkey,
  DROP CONSTRAINT retractions_settled_probe_record_id_fkey;

-- 2. ids unique per subject (each primary key already says so)
ALTER TABLE sessions DROP CONSTRAINT sessions_id_key;
ALTER TABLE turns
  DROP CONSTRAINT turns_id_key,
  ADD CONSTRAINT turns_subject_id_id_key UNIQUE (subject_id, id);
ALTER TABLE facts DROP CONSTRAINT facts_id_key;
ALTER TABLE dropped_proposals DROP CONSTRAINT dropped_proposals_id_key;
ALTER TABLE retractions DROP CONSTRAINT retractions_id_key;
ALTER TABLE commitments DROP CONSTRAINT commitments_id_key;
ALTER TABLE actions DROP CONSTRAINT actions_id_key;
ALTER TABLE arrival_manifests DROP CONSTRAINT arrival_manifests_id_key;

-- 3. a probe record belongs to its subject; the ones of no subject are removed (see above)
DO $no_subject$
DECLARE
  removed bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM probe_records WHERE subject_id IS NULL) THEN
    ALTER TABLE probe_records DISABLE TRIGGER probe_records_append_only;
    DELETE FROM probe_records WHERE subject_id IS NULL;
    GET DIAGNOSTICS removed = ROW_COUNT;
    ALTER TABLE probe_records ENABLE TRIGGER probe_records_append_only;
    RAISE NOTICE 'memledger: migration 12 removed % probe record(s) of no subject, written by a version before subject handles and read by none since', removed;
  END IF;
END
$no_subject$;
ALTER TABLE probe_records
  ALTER COLUMN subject_id SET NOT NULL,
  DROP CONSTRAINT probe_records_seq_key,
  DROP CONSTRAINT probe_records_pkey,
  ADD CONSTRAINT probe_records_pkey PRIMARY KEY (subject_id, id);

-- 4. the foreign keys again, each carrying the subject
ALTER TABLE facts
  ADD CONSTRAINT facts_evidence_turn_id_fkey FOREIGN KEY (subject_id, evidence_turn_id)
    REFERENCES turns (subject_id, id),
  ADD CONSTRAINT facts_supersedes_id_fkey FOREIGN KEY (subject_id, supersedes_id)
    REFERENCES facts (subject_id, id),
  ADD CONSTRAINT facts_superseded_by_id_fkey FOREIGN KEY (subject_id, superseded_by_id)
    REFERENCES facts (subject_id, id),
  ADD CONSTRAINT facts_restored_from_id_fkey FOREIGN KEY (subject_id, restored_from_id)
    REFERENCES facts (subject_id, id),
  ADD CONSTRAINT facts_retraction_id_fkey FOREIGN KEY (subject_id, retraction_id)
    REFERENCES retractions (subject_id, id);
ALTER TABLE retractions
  ADD CONSTRAINT retractions_fact_id_fkey FOREIGN KEY (subject_id, fact_id)
    REFERENCES facts (subject_id, id),
  ADD CONSTRAINT retractions_restored_fact_id_fkey FOREIGN KEY (subject_id, restored_fact_id)
    REFERENCES facts (subject_id, id),
  ADD CONSTRAINT retractions_settled_probe_record_id_fkey
    FOREIGN KEY (subject_id, settled_probe_record_id) REFERENCES probe_records (subject_id, id);
`;
