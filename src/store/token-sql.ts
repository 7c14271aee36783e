import type { TokenRole } from '../domain/token.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A token's row: its grant, the owner's signature over it, and its revocation. */
export interface TokenRow {
  id: string;
  subjectId: string;
  role: TokenRole;
  name: string | null;
  tokenHash: string;
  keyId: string;
  signature: string;
  createdAt: string;
  revokedAt: Date | null;
}

interface Row {
  id: string;
  subject_id: string;
  role: TokenRole;
  name: string | null;
  token_hash: string;
  key_id: string;
  signature: string;
  created_at: string;
  revoked_at: Date | null;
}

const COLUMNS = 'id, subject_id, role, name, token_hash, key_id, signature, created_at, revoked_at';

const toRow = (r: Row): TokenRow => ({
  id: r.id,
  subjectId: r.subject_id,
  role: r.role,
  name: r.name,
  tokenHash: r.token_hash,
  keyId: r.key_id,
  signature: r.signature,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

/** Access tokens: a reference table, looked up by hash before any subject is known. */
export class TokenSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(t: Omit<TokenRow, 'revokedAt'>): Promise<void> {
    return guard('storing a token', async () => {
      await this.db.query(
        `INSERT INTO access_tokens
           (id, subject_id, role, name, token_hash, key_id, signature, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [t.id, t.subjectId, t.role, t.name, t.tokenHash, t.keyId, t.signature, t.createdAt],
      );
    });
  }

  /**
   * Every row with this hash (the unique constraint makes it one; a copy of the table may not),
   * with its subject's owner key as the store holds it now: one statement per authentication.
   */
  byHash(tokenHash: string): Promise<
    Array<
      TokenRow & {
        ownerPublicKey: string | null;
        ownerKeyId: string | null;
        /** A revocation link naming it is stored in its subject's chain (verified or not). */
        revokedOnChain: boolean;
      }
    >
  > {
    return guard('reading a token', async () => {
      const { rows } = await this.db.query<
        Row & {
          owner_public_key: string | null;
          owner_key_id: string | null;
          revoked_on_chain: boolean;
        }
      >(
        `SELECT ${COLUMNS.split(', ')
          .map((c) => `t.${c}`)
          .join(', ')},
                s.owner_public_key, s.owner_key_id,
                EXISTS (SELECT 1 FROM decisions d
                        WHERE d.subject_id = t.subject_id AND d.decision = 'revoke'
                          AND d.proposal_id = 'token:' || t.id) AS revoked_on_chain
         FROM access_tokens t LEFT JOIN subjects s ON s.id = t.subject_id
         WHERE t.token_hash = $1`,
        [tokenHash],
      );
      return rows.map((r) => ({
        ...toRow(r),
        ownerPublicKey: r.owner_public_key,
        ownerKeyId: r.owner_key_id,
        revokedOnChain: r.revoked_on_chain,
      }));
    });
  }

  get(id: string): Promise<TokenRow | null> {
    return guard('reading a token', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM access_tokens WHERE id = $1`,
        [id],
      );
      return rows[0] === undefined ? null : toRow(rows[0]);
    });
  }

  /** Tokens, oldest first; of one subject when given. */
  list(subjectId: string | null): Promise<TokenRow[]> {
    return guard('listing tokens', async () => {
      const { rows } = await this.db.query<Row>(
        `SELECT ${COLUMNS} FROM access_tokens
         WHERE $1::text IS NULL OR subject_id = $1 ORDER BY created_at, id`,
        [subjectId],
      );
      return rows.map(toRow);
    });
  }

  /** Revokes a token that is not revoked yet; the row as it is afterwards, null when none. */
  revoke(id: string, at: Date): Promise<TokenRow | null> {
    return guard('revoking a token', async () => {
      const { rows } = await this.db.query<Row>(
        `UPDATE access_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
         RETURNING ${COLUMNS}`,
        [id, at],
      );
      return rows[0] === undefined ? null : toRow(rows[0]);
    });
  }
}
