/**
 * Migration 18: a link's format. Format 2 is sealed by a process that, before signing, checked the
 * chain under its own key (the signer's, never the key the store reports), so its signature
 * vouches for every link under it and reads check that one signature instead of each link's
 * (docs/TRUST.md, "What one signature covers"). The format is in the signed payload (`v`), so it
 * cannot be changed without breaking the link. Links stored before are format 1: their own
 * signatures are checked, each, as before.
 */
export const sql = `
ALTER TABLE decisions ADD COLUMN format smallint NOT NULL DEFAULT 1 CHECK (format IN (1, 2));
`;
