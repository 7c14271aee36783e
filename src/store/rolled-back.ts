import { EngineError } from '../domain/errors.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** The one throw that ends a rehearsal's transaction; never seen outside `rolledBack`. */
class RolledBack<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `fn` in a transaction of its own, then rolls the transaction back whatever `fn` wrote, and
 * returns what `fn` returned: a rehearsal sees and does everything a real run would, and the
 * store is left exactly as it was. An error `fn` throws rolls back too and is thrown as it is.
 */
export async function rolledBack<T>(
  client: SqlClient,
  fn: (tx: SqlExecutor) => Promise<T>,
): Promise<T> {
  try {
    await client.transaction(async (tx) => {
      throw new RolledBack(await fn(tx));
    });
  } catch (err) {
    if (err instanceof RolledBack) return err.value as T;
    throw err;
  }
  throw new EngineError('INTERNAL', 'a rehearsal’s transaction committed');
}

/** A transaction that commits, or with `rehearse` one that is rolled back (`rolledBack`). */
export function transactionOf(
  client: SqlClient,
  rehearse: boolean,
): <T>(fn: (tx: SqlExecutor) => Promise<T>) => Promise<T> {
  return rehearse ? (fn) => rolledBack(client, fn) : (fn) => client.transaction(fn);
}
