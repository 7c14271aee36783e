import { EngineError } from '../domain/errors.js';
import { readOnlySql, type ReadOnlyQueryOptions, type ReadOnlySql } from './read-only-sql.js';
import type { QueryResult, SqlClient } from './sql-client.js';
import { DatabaseError } from './store-error.js';

/** What PostgreSQL says when statement_timeout ends a statement (SQLSTATE query_canceled). */
function statementTimeout(): DatabaseError {
  return new DatabaseError('canceling statement due to statement timeout', '57014');
}

/**
 * Runs the statement on a snapshot, stopped (the snapshot closed) once `timeoutMs` has passed
 * from the moment the snapshot is ready: a timeout then ends it as PostgreSQL's does.
 */
async function onSnapshot<T>(
  open: () => Promise<SqlClient>,
  text: string,
  params: readonly unknown[],
  options: ReadOnlyQueryOptions,
): Promise<QueryResult<T>> {
  const copy = await open();
  let timer: NodeJS.Timeout | undefined;
  try {
    const reading = readOnlySql(copy).query<T>(text, params, options);
    if (options.timeoutMs === undefined) return await reading;
    const ms = Math.max(1, Math.floor(options.timeoutMs));
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(statementTimeout()), ms);
    });
    // The losing side rejects once the snapshot closes; nobody waits for it.
    reading.catch(() => undefined);
    return await Promise.race([reading, expired]);
  } finally {
    clearTimeout(timer);
    await copy.close();
  }
}

/**
 * The reader for SQL the engine did not write (probes): each statement ends at its `timeoutMs`,
 * and nothing else the process does waits for it. Where the engine stops statements itself
 * (`stopsStatements`), that is `readOnlySql` over the client. Elsewhere each statement runs, in
 * the same sandbox, on a snapshot of the store that is closed (stopping the statement) at the
 * timeout; one snapshot at a time, since each holds a copy of the store.
 */
export function boundedSql(client: SqlClient): ReadOnlySql {
  if (client.capabilities.stopsStatements) return readOnlySql(client);
  const snapshot = client.snapshot?.bind(client);
  if (snapshot === undefined) {
    throw new EngineError(
      'INTERNAL',
      `the ${client.kind} engine can neither stop a statement nor take a snapshot`,
    );
  }
  let queue: Promise<unknown> = Promise.resolve();
  return {
    query<T>(text: string, params: readonly unknown[] = [], options: ReadOnlyQueryOptions = {}) {
      const run = queue.then(() => onSnapshot<T>(snapshot, text, params, options));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
