import { EngineError } from '../domain/errors.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A subject as stored, with its owner's public key once one is set. */
export interface SubjectRow {
  id: string;
  createdAt: Date;
  ownerPublicKey: string | null;
  ownerKeyId: string | null;
}

/** Subjects: created once, never deleted; each holds its owner's public key. */
export class SubjectSql {
  constructor(private readonly db: SqlExecutor) {}

  /** Creates the subject if it is new; returns whether it was created. */
  ensure(id: string, at: Date): Promise<boolean> {
    return guard('creating a subject', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        'INSERT INTO subjects (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
        [id, at],
      );
      return rows.length === 1;
    });
  }

  get(id: string): Promise<SubjectRow | null> {
    return guard('reading a subject', async () => {
      const { rows } = await this.db.query<{
        id: string;
        created_at: Date;
        owner_public_key: string | null;
        owner_key_id: string | null;
      }>('SELECT id, created_at, owner_public_key, owner_key_id FROM subjects WHERE id = $1', [id]);
      const row = rows[0];
      return row === undefined
        ? null
        : {
            id: row.id,
            createdAt: row.created_at,
            ownerPublicKey: row.owner_public_key,
            ownerKeyId: row.owner_key_id,
          };
    });
  }

  /** Every subject's id, in order. */
  list(): Promise<string[]> {
    return guard('listing subjects', async () => {
      const { rows } = await this.db.query<{ id: string }>('SELECT id FROM subjects ORDER BY id');
      return rows.map((r) => r.id);
    });
  }

  /** Stores the owner's public key once; a subject's key is never replaced silently. */
  setOwnerKey(id: string, publicKeyPem: string, keyId: string): Promise<boolean> {
    return guard('storing the owner key', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        `UPDATE subjects SET owner_public_key = $2, owner_key_id = $3
         WHERE id = $1 AND owner_public_key IS NULL RETURNING id`,
        [id, publicKeyPem, keyId],
      );
      return rows.length === 1;
    });
  }

  /** The store's identity (store_meta): made once, by the first engine that opens the store. */
  storeId(newId: string, at: Date): Promise<string> {
    return guard('reading the store id', async () => {
      await this.db.query(
        `INSERT INTO store_meta (one, store_id, created_at) VALUES (true, $1, $2)
         ON CONFLICT (one) DO NOTHING`,
        [newId, at],
      );
      const { rows } = await this.db.query<{ store_id: string }>('SELECT store_id FROM store_meta');
      const id = rows[0]?.store_id;
      if (id === undefined) {
        throw new EngineError('DB_UNUSABLE', 'the store has no identity row (store_meta is empty)');
      }
      return id;
    });
  }
}
