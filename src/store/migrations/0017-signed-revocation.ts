/**
 * A token's revocation is an owner decision on the chain (a `revoke` link naming the token), so a
 * process with the store cannot bring a revoked token back by clearing `revoked_at`. Tokens
 * revoked before this migration have no link: their `revoked_at` still refuses them, but only a
 * new revocation (`memledger token revoke` again) makes that signed.
 */
export const sql = `
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate', 'revoke'));
`;
