import { createHash } from 'node:crypto';
import { EngineError } from '../domain/errors.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** Serialises migration across processes sharing one PostgreSQL database ("memledger" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6d656d6c;

/** SHA-256 of a migration's SQL: an applied migration whose text changed is refused. */
export function migrationChecksum(m: Migration): string {
  return createHash('sha256').update(m.sql).digest('hex');
}

/** Whether the database holds a memledger store (its migrations table exists). */
export async function isInitialized(db: SqlExecutor): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS present`,
  );
  return rows[0]?.present === true;
}

/**
 * Applies pending migrations in one transaction under an advisory lock, after checking that the
 * applied ones are exactly the ones this code knows.
 */
export async function migrate(
  client: SqlClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  return client.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      checksum   text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    );
    for (const row of rows) {
      const known = migrations.find((m) => m.version === row.version);
      if (known === undefined) {
        throw new EngineError(
          'STORE_TOO_NEW',
          `the store has migration ${row.version} (${row.name}), which this memledger does not know; upgrade memledger`,
        );
      }
      if (migrationChecksum(known) !== row.checksum) {
        throw new EngineError(
          'MIGRATION_MISMATCH',
          `migration ${row.version} (${row.name}) in the store differs from this memledger's copy`,
        );
      }
    }
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      if (m.backfill !== undefined) await m.backfill(tx, { applied: [...applied] });
      await tx.query(
        'INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)',
        [m.version, m.name, migrationChecksum(m)],
      );
      applied.push(m.version);
    }
    return applied;
  });
}
