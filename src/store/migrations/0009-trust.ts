/**
 * Trust at read time: slot delegations are signed links of the decision chain, the store has an
 * identity (so a head recorded outside it can name it), and each arrival records the chain head
 * it saw (so a cut head is found later).
 *
 * A slot declared auto-live before this migration has no signed delegation: from now on its
 * receipt-promoted facts are withheld from live memory until the owner delegates the slot
 * (`memledger slot delegate`), which is what "an unsigned auto-live declaration has no effect"
 * means for stores made by earlier versions.
 */
export const sql = `
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate'));

-- The tools whose receipts may back a did fact that goes live with no decision (the delegation).
ALTER TABLE slots ADD COLUMN auto_live_tools text[] NOT NULL DEFAULT '{}';

-- The store's identity: one row, written by the first engine that opens the store.
CREATE TABLE store_meta (
  one         boolean PRIMARY KEY DEFAULT true CHECK (one),
  store_id    text NOT NULL,
  created_at  timestamptz NOT NULL
);

CREATE TRIGGER store_meta_append_only BEFORE UPDATE OR DELETE ON store_meta
  FOR EACH ROW EXECUTE FUNCTION memledger_append_only();

-- The decision chain as this arrival saw it: a later chain shorter than this, or with another
-- hash at this length, was cut.
ALTER TABLE arrival_manifests ADD COLUMN chain_length integer, ADD COLUMN chain_head text;
CREATE INDEX arrival_manifests_by_chain ON arrival_manifests (subject_id, chain_length DESC)
  WHERE chain_length IS NOT NULL;
`;
