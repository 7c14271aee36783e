import type { QueryResult, SqlClient } from './sql-client.js';

/**
 * Reads the store and changes nothing: what host blocks and probe instruments are given instead
 * of the store's client, so no public extension point can write the store's tables.
 */
export interface ReadOnlySql {
  /**
   * One statement in a READ ONLY transaction that is always rolled back. The text goes out as
   * one prepared statement (PostgreSQL would otherwise run `COMMIT; INSERT …` as two); a
   * snapshot is taken first, so the statement cannot `SET TRANSACTION READ WRITE`; the rollback
   * undoes even a session setting (`SET search_path …`). Database errors come back as thrown.
   */
  query<T = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: { timeoutMs?: number },
  ): Promise<QueryResult<T>>;
}

/** Thrown out of the transaction to roll it back; never seen outside. */
const ROLLBACK = Symbol('rollback');

export function readOnlySql(client: SqlClient): ReadOnlySql {
  return {
    async query<T>(
      text: string,
      params: readonly unknown[] = [],
      options: { timeoutMs?: number } = {},
    ): Promise<QueryResult<T>> {
      let result: QueryResult<T> | undefined;
      try {
        await client.transaction(async (tx) => {
          await tx.query('SET TRANSACTION READ ONLY');
          if (options.timeoutMs !== undefined) {
            // SET LOCAL ends with the transaction; PGlite accepts it but cannot interrupt.
            const ms = Math.max(1, Math.floor(options.timeoutMs));
            await tx.query(`SET LOCAL statement_timeout = ${ms}`);
          }
          // A snapshot now: from here on the transaction can no longer be made read-write.
          await tx.query('SELECT 1');
          result = await tx.query<T>(text, params, { oneStatement: true });
          throw ROLLBACK;
        });
      } catch (err) {
        if (err !== ROLLBACK) throw err;
      }
      return result as QueryResult<T>;
    },
  };
}
