/**
 * Migration 19: taking a fact the owner approved out of memory is an owner decision on the chain
 * (a `retract` link naming the ledger row, its content hash over the row's words and the fact it
 * names), so a ledger row an agent or a process with the store wrote takes nothing down by itself:
 * the fact stays live, marked disputed, until the owner signs (docs/TRUST.md, "Retractions").
 * Facts retracted before this migration have no link: reads name them until the owner signs
 * their retractions (`memledger retract sign`).
 */
export const sql = `
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate', 'revoke', 'retract'));
`;
